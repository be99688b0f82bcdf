package compare

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
)

func meshOf(p99s []float64, failed int) *result.MeshDocument {
	d := &result.MeshDocument{}
	for r, h := range []string{"a", "b", "c"} {
		d.Ranks = append(d.Ranks, result.MeshRank{Rank: r, Host: h})
	}
	for i, e := range [][2]int{{0, 1}, {1, 2}, {2, 0}} {
		p := result.MeshPair{Client: e[0], Server: e[1], ClientHost: d.Ranks[e[0]].Host, ServerHost: d.Ranks[e[1]].Host, Status: result.StatusOK}
		r := result.Result{Op: "send", Mode: "lat", SizeBytes: 2}
		r.Latency.Count = 1000
		r.Latency.P99 = result.Nanos{NS: p99s[i], OK: true}
		p.Results = []result.Result{r}
		if i == failed {
			p.Status, p.Results = result.StatusFailed, nil
		}
		d.Pairs = append(d.Pairs, p)
	}
	return d
}

func TestGateMesh(t *testing.T) {
	limits := map[string]float64{MetricP99: 0.10}
	base := meshOf([]float64{1000, 1000, 1000}, -1)
	for _, c := range []struct {
		name      string
		cur       *result.MeshDocument
		regressed []string
		failed    []string
	}{
		{"itself", base, nil, nil},
		{"one pair +20%", meshOf([]float64{1000, 1200, 1000}, -1), []string{"b(1)→c(2)"}, nil},
		{"+5% is within 10%", meshOf([]float64{1050, 1000, 1000}, -1), nil, nil},
		{"a failed pair", meshOf([]float64{1000, 1000, 1000}, 2), nil, []string{"c(2)→a(0)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := GateMesh(base, c.cur, limits)
			var got []string
			for _, r := range g.Regressions {
				got = append(got, r.Pair)
			}
			if strings.Join(got, ",") != strings.Join(c.regressed, ",") || strings.Join(g.Failed, ",") != strings.Join(c.failed, ",") {
				t.Fatalf("regressed %v failed %v, want %v %v", got, g.Failed, c.regressed, c.failed)
			}
			err := g.Err()
			var me *MeshRegressionError
			if (len(c.regressed)+len(c.failed) > 0) != errors.As(err, &me) {
				t.Fatalf("err %v", err)
			}
			for _, p := range append(c.regressed, c.failed...) {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not name %s", err, p)
				}
			}
		})
	}
}

// Pairs match by host, in either direction, whatever the rank numbers.
func TestMatchPairsByHost(t *testing.T) {
	base := meshOf([]float64{1, 2, 3}, -1)
	cur := meshOf([]float64{1, 2, 3}, -1)
	cur.Pairs[0].Client, cur.Pairs[0].Server = 1, 0
	cur.Pairs[0].ClientHost, cur.Pairs[0].ServerHost = "b", "a"
	_, bps := MatchPairs(base, cur)
	for i, bp := range bps {
		if bp == nil || bp.Results[0].Latency.P99.NS != cur.Pairs[i].Results[0].Latency.P99.NS {
			t.Errorf("pair %d matched %v", i, bp)
		}
	}
	var b bytes.Buffer
	if err := WriteMeshTables(&b, []*result.MeshDocument{base, cur}, []string{"base", "cur"}, nil, result.UnitMiB, report.Width); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "pair b(1)→a(0):") || !strings.Contains(b.String(), "send lat 2B") {
		t.Errorf("tables:\n%s", b.String())
	}
}

// TestGateMeshMissingTest: a pair of the new run that lacks a test of the
// baseline's pair fails the mesh gate, named, rather than passing unseen.
func TestGateMeshMissingTest(t *testing.T) {
	base, err := result.ReadMeshFile("../result/testdata/mesh_tcp.json")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := result.ReadMeshFile("../result/testdata/mesh_tcp.json")
	if err != nil {
		t.Fatal(err)
	}
	var p *result.MeshPair
	for i := range cur.Pairs {
		if cur.Pairs[i].Status == result.StatusOK && len(cur.Pairs[i].Results) > 1 {
			p = &cur.Pairs[i]
			break
		}
	}
	if p == nil {
		t.Skip("no pair with two tests in the fixture")
	}
	p.Results = p.Results[:1]
	g := GateMesh(base, cur, map[string]float64{MetricP99: 0.1})
	if g.Err() == nil || !strings.Contains(strings.Join(g.Failed, "\n"), "(missing in the new run)") {
		t.Errorf("a pair lacking a test passes: %v %q", g.Err(), g.Failed)
	}
}
