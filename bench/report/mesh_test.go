package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// meshDoc is an n-rank document with one lat and one bw test per pair:
// p99 of pair i is p99s[i] µs, bandwidth bws[i] MB/s.
func meshDoc(p99s, bws []float64, n int) *result.MeshDocument {
	d := &result.MeshDocument{Pattern: "pairs", Rounds: n, Outcome: result.MeshComplete}
	for r := range n {
		d.Ranks = append(d.Ranks, result.MeshRank{Rank: r, Host: "h" + string(rune('a'+r)), Status: result.StatusOK})
	}
	k := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			p := result.MeshPair{Client: i, Server: j, ClientHost: d.Ranks[i].Host, ServerHost: d.Ranks[j].Host, Status: result.StatusOK}
			if k < len(p99s) {
				lat := result.Result{Op: "send", Mode: "lat", SizeBytes: 2}
				lat.Latency.P50 = result.Nanos{NS: p99s[k] * 500, OK: true}
				lat.Latency.P99 = result.Nanos{NS: p99s[k] * 1000, OK: true}
				bw := result.Result{Op: "send", Mode: "bw", SizeBytes: 65536}
				bw.Bandwidth.MBPerSec, bw.Bandwidth.MiBPerSec = bws[k], bws[k]
				p.Results = []result.Result{lat, bw}
			} else {
				p.Status, p.Error = result.StatusFailed, "boom"
				d.Outcome = result.MeshPartial
			}
			d.Pairs = append(d.Pairs, p)
			k++
		}
	}
	return d
}

func TestMeshMatrix(t *testing.T) {
	d := meshDoc([]float64{10, 11}, []float64{100, 90}, 3)
	var b bytes.Buffer
	if err := WriteMeshMatrix(&b, d, result.UnitMiB); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"mesh: 3 ranks, pattern pairs, 3 rounds, 3 pairs, 1 failed (partial)",
		"send lat 2B: p50/p99/p99.9 latency, usec (row: client, column: server)",
		"5.00/10.00/n/a", "FAILED", "send bw 64K: bandwidth, MiB/sec", "100.00",
		"failed pairs:", "hb(1)→hc(2) (round 0): boom",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("matrix lacks %q:\n%s", want, out)
		}
	}
	// row ha(0): '-' on the diagonal, then ha→hb, ha→hc
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "ha(0)") && strings.Contains(l, "5.00/10.00") {
			if f := strings.Fields(l); len(f) != 4 || f[1] != "-" {
				t.Errorf("row %q", l)
			}
		}
	}
}

func TestMeshOutliers(t *testing.T) {
	for _, c := range []struct {
		name  string
		p99s  []float64
		bws   []float64
		n     int
		want  []string // pair names, worst first
		score float64  // of the first, 0: don't check
	}{
		{"none", []float64{10, 11, 10, 12, 11, 10}, []float64{100, 100, 99, 101, 100, 100}, 4, nil, 0},
		{"one slow pair", []float64{10, 11, 10, 40, 11, 10}, []float64{100, 100, 99, 101, 100, 100}, 4, []string{"hb(1)→hc(2)"}, 0},
		{"latency and bandwidth, worst first", []float64{10, 11, 10, 40, 11, 20}, []float64{100, 100, 10, 101, 100, 100}, 4,
			[]string{"ha(0)→hd(3)", "hb(1)→hc(2)", "hc(2)→hd(3)"}, 0},
		{"MAD zero: the 1 % floor", []float64{10, 10, 10, 10, 10, 11}, []float64{100, 100, 100, 100, 100, 100}, 4, []string{"hc(2)→hd(3)"}, 10},
		{"too few pairs", []float64{10, 50}, []float64{100, 100}, 3, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			outs := MeshOutliers(meshDoc(c.p99s, c.bws, c.n), 3)
			var got []string
			for _, o := range outs {
				got = append(got, o.Pair.Name())
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("outliers %v, want %v", got, c.want)
			}
			if c.score != 0 && (len(outs) == 0 || math.Abs(outs[0].Score-c.score) > 1e-9) {
				t.Errorf("first score %v, want %v", outs, c.score)
			}
			var b bytes.Buffer
			WriteMeshOutliers(&b, outs, 3)
			if len(outs) == 0 && !strings.Contains(b.String(), "none") || len(outs) > 0 && !strings.Contains(b.String(), got[0]) {
				t.Errorf("report:\n%s", b.String())
			}
		})
	}
}

// TestMeshOutlierNICs: the NIC at an end of every outlier pair is named;
// one outlier pair names none.
func TestMeshOutlierNICs(t *testing.T) {
	bws := []float64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	// 5 ranks, pairs (0,1) (0,2) (0,3) (0,4) (1,2) (1,3) (1,4) (2,3) (2,4) (3,4): rank 4's are slow
	d := meshDoc([]float64{10, 11, 10, 40, 10, 11, 41, 10, 42, 40}, bws, 5)
	d.Ranks[4].Device = "rxe3"
	outs := MeshOutliers(d, 3)
	nics := MeshOutlierNICs(d, outs)
	if len(nics) != 1 || nics[0].Rank != 4 || nics[0].Pairs != 4 {
		t.Fatalf("outlier NICs %+v (outliers %d), want rank 4 in 4 pairs", nics, len(outs))
	}
	var b bytes.Buffer
	if err := WriteMeshOutlierNICs(&b, d, outs, "rail 1"); err != nil {
		t.Fatal(err)
	}
	if want := "outlier NIC on rail 1: he(4) rxe3 (an end of 4 of the outlier pairs)\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	one := meshDoc([]float64{10, 11, 10, 40, 11, 10}, []float64{100, 100, 99, 101, 100, 100}, 4)
	if nics := MeshOutlierNICs(one, MeshOutliers(one, 3)); len(nics) != 0 {
		t.Errorf("one outlier pair: NICs %+v, want none", nics)
	}
}
