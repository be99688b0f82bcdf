//go:build experiment

package expkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CounterDir is an RDMA device's port 1 hw_counters directory.
func CounterDir(dev string) string {
	return filepath.Join("/sys/class/infiniband", dev, "ports/1/hw_counters")
}

// Counter reads one of dev's port counters (-1 when unreadable).
func Counter(dev, name string) int64 {
	b, err := os.ReadFile(filepath.Join(CounterDir(dev), name))
	if err != nil {
		return -1
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// Counters is a dump of dev's port counters and the guest's CPU time, a
// "name value" line each (what internal/exptool/wirebw reads): every
// hw_counters file, then cpu_busy (user, nice, system, irq, softirq) and
// cpu_total (those and idle, iowait) from /proc/stat, in USER_HZ ticks.
func Counters(dev string) string {
	var b strings.Builder
	ents, _ := os.ReadDir(CounterDir(dev))
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		if v := Counter(dev, n); v >= 0 {
			fmt.Fprintf(&b, "%s %d\n", n, v)
		}
	}
	if f, ok := cpuFields("cpu"); ok {
		fmt.Fprintf(&b, "cpu_busy %d\ncpu_total %d\n", f[0]+f[1]+f[2]+f[5]+f[6], f[0]+f[1]+f[2]+f[3]+f[4]+f[5]+f[6])
	}
	return b.String()
}

// cpuFields is the first seven fields (user nice system idle iowait irq
// softirq) of /proc/stat's line for cpu ("cpu", "cpu0", ...).
func cpuFields(cpu string) ([7]int64, bool) {
	var f [7]int64
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return f, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		fs := strings.Fields(l)
		if len(fs) < 8 || fs[0] != cpu {
			continue
		}
		for i := range f {
			f[i], _ = strconv.ParseInt(fs[i+1], 10, 64)
		}
		return f, true
	}
	return f, false
}

// Sample is one sampler line, "UPTIME TAG | CPU0 | CPU1 | SENT RCVD"
// (internal/exptool/wirebw's steady.go reads them): the guest's uptime, the
// run going on, both CPUs' /proc/stat fields and dev's sent and received
// packets.
func Sample(dev, tag string) string {
	up := "0"
	if b, err := os.ReadFile("/proc/uptime"); err == nil {
		if fs := strings.Fields(string(b)); len(fs) > 0 {
			up = fs[0]
		}
	}
	cpu := func(n string) string {
		f, _ := cpuFields(n)
		return strings.Trim(fmt.Sprint(f), "[]")
	}
	return fmt.Sprintf("%s %s | %s | %s | %d %d", up, tag, cpu("cpu0"), cpu("cpu1"),
		Counter(dev, "sent_pkts"), Counter(dev, "rcvd_pkts"))
}

// RunSampler writes a Sample line to w every 0.5 s until ctx ends.
func RunSampler(ctx context.Context, w io.Writer, dev string, tag func() string) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		fmt.Fprintln(w, Sample(dev, tag()))
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Listening reports whether a TCP socket of this guest listens on port
// (/proc/net/tcp, tcp6: a probing connection would be a perftest server's
// client).
func Listening(port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(l)
			if len(fs) > 3 && strings.HasSuffix(fs[1], want) && fs[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// WaitListening polls Listening(port) every 50 ms until ctx ends.
func WaitListening(ctx context.Context, port int) error {
	for !Listening(port) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("nothing listens on port %d: %w", port, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// PinIRQs moves virtio's interrupts to CPU 0 (errors ignored, as the old
// payloads did): the tools' pollers then run on CPU 1, off rxe's receive path.
func PinIRQs() {
	b, _ := os.ReadFile("/proc/interrupts")
	for _, l := range strings.Split(string(b), "\n") {
		if n, _, ok := strings.Cut(l, ":"); ok && strings.Contains(l, "virtio") {
			os.WriteFile(filepath.Join("/proc/irq", strings.TrimSpace(n), "smp_affinity"), []byte("1\n"), 0o644)
		}
	}
}

// Lines is a writer that passes its bytes on to W and watches its lines.
type Lines struct {
	W io.Writer // may be nil

	mu      sync.Mutex
	partial []byte
	watches []watch
	all     bytes.Buffer
}

type watch struct {
	match func(string) bool
	ch    chan string
}

// Match returns a channel that receives the first line (written after this
// call) for which match is true.
func (l *Lines) Match(match func(string) bool) <-chan string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan string, 1)
	l.watches = append(l.watches, watch{match, ch})
	return ch
}

// Contains is Match for a line containing s.
func (l *Lines) Contains(s string) <-chan string {
	return l.Match(func(line string) bool { return strings.Contains(line, s) })
}

// String is everything written so far.
func (l *Lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all.String()
}

func (l *Lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.all.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		keep := l.watches[:0]
		for _, w := range l.watches {
			if w.match(line) {
				w.ch <- line
			} else {
				keep = append(keep, w)
			}
		}
		l.watches = keep
	}
	l.mu.Unlock()
	if l.W != nil {
		return l.W.Write(p)
	}
	return len(p), nil
}

// Await waits for ch, the end of ctx or done (a process's end), whichever
// comes first; what names what is awaited, for the error.
func Await(ctx context.Context, ch <-chan string, done <-chan struct{}, what string) (string, error) {
	select {
	case l := <-ch:
		return l, nil
	case <-done:
		select {
		case l := <-ch:
			return l, nil
		default:
		}
		return "", fmt.Errorf("%s: the process ended first", what)
	case <-ctx.Done():
		return "", fmt.Errorf("%s: %w", what, ctx.Err())
	}
}
