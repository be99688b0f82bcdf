package measure

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/internal/numa"
)

func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	s := spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Iters: 100}
	p := NewProgress(s, Options{Progress: &b}, 0)
	h := hist.New()
	for i := int64(1); i <= 1000; i++ {
		h.Record(i * 1000) // RTT 1..1000 us: reported halved
	}
	p.Update(int64(time.Second), 50, h)
	got := b.String()
	for _, want := range []string{"\rsend lat 2B: 1s elapsed, 1s left, 50 done, p50 250.", "p99 495.", "\033[K"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress line %q lacks %q", got, want)
		}
	}
	p.Update(int64(time.Second)+1, 51, h) // not due yet
	if b.String() != got {
		t.Errorf("progress line rewritten before it was due: %q", b.String())
	}
	p.Clear()
	if !strings.HasSuffix(b.String(), "\r\033[K") {
		t.Errorf("clear did not erase the line: %q", b.String())
	}
	var quiet bytes.Buffer
	q := NewProgress(s, Options{}, 0)
	q.Update(int64(time.Second), 50, h)
	q.Clear()
	if quiet.Len() != 0 {
		t.Error("progress printed without a terminal")
	}
}

func TestIntervalsHlogAndLines(t *testing.T) {
	var lines, log bytes.Buffer
	lw, err := hist.NewLogWriter(&log, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s := spec.Spec{Op: result.OpWrite, Mode: result.ModeLat, Size: 64, Duration: 3 * time.Second}
	iv := NewIntervals(s, Options{Out: &lines, HLog: lw, Unit: result.UnitMB}, 0)
	samples := []uint64{2000, 4000, 6000} // RTTs: reported as 1, 2, 3 us
	sec := int64(time.Second)
	iv.Add(samples, 3, sec/2)
	iv.Add(samples, 3, sec)         // closes [0, 1s]
	iv.Add(samples, 3, 2*sec+sec/2) // closes [1s, 2.5s]: a batch ends past the boundary
	iv.Add(samples, 3, 2*sec+9*sec/10)
	iv.Flush(3 * sec)
	if iv.Err != nil {
		t.Fatal(iv.Err)
	}
	if len(iv.List) != 3 || iv.List[0].Ops != 6 || iv.List[2].EndNS != 3*sec {
		t.Fatalf("intervals %+v", iv.List)
	}
	if p50 := iv.List[0].P50; !p50.OK || p50.NS < 1900 || p50.NS > 2100 {
		t.Errorf("interval p50 %v, want about 2000 ns (half of the 4000 ns RTT)", p50)
	}
	if n := strings.Count(lines.String(), "\n"); n != 3 {
		t.Errorf("%d interval lines, want 3:\n%s", n, lines.String())
	}
	if n := strings.Count(log.String(), "Tag=write-lat-64B,"); n != 3 {
		t.Errorf("%d tagged .hlog intervals, want 3:\n%s", n, log.String())
	}
}

// TestLockThreadNode: an unpinned thread is pinned to the node's CPUs, and
// --cpu wins.
func TestLockThreadNode(t *testing.T) {
	all, err := numa.Affinity()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cpu  int
		node []int
		want []int
	}{
		{-1, all[:1], all[:1]},
		{all[0], all, all[:1]},
		{-1, nil, all},
	} {
		got, back := make(chan []int, 1), make(chan []int, 1)
		go func() { // a fresh thread each time: it ends with the goroutine
			LockThread(tc.cpu, tc.node)
			c, _ := numa.Affinity()
			got <- c
			RestoreAffinity() // what UnlockThread does before unlocking
			c, _ = numa.Affinity()
			back <- c
		}()
		if c := <-got; !reflect.DeepEqual(c, tc.want) {
			t.Errorf("lockThread(%d, %v): affinity %v, want %v", tc.cpu, tc.node, c, tc.want)
		}
		if c := <-back; !reflect.DeepEqual(c, all) {
			t.Errorf("after lockThread(%d, %v), restoreAffinity: affinity %v, want the process's %v", tc.cpu, tc.node, c, all)
		}
	}
}
