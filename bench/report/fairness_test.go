package report

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func TestWriteMeshFairness(t *testing.T) {
	j := 0.9
	doc := &result.MeshDocument{Pattern: "all-to-one", Root: 0,
		Ranks: []result.MeshRank{{Rank: 0, Host: "a"}, {Rank: 1, Host: "b"}, {Rank: 2, Host: "c"}},
		Fairness: []result.MeshFairness{{Test: "write bw 64K", Mode: "bw", Jain: &j, Flows: []result.MeshFlow{
			{Client: 1, MBPerSec: 10, P99: result.Nanos{NS: 2500, OK: true}}, {Client: 2, MBPerSec: 20}}}}}
	var b strings.Builder
	if err := WriteMeshFairness(&b, doc, result.UnitMB); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Jain's index 0.900 over 2 senders", "10.00", "20.00", "2.50", "n/a"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	WriteMeshFairness(&b, &result.MeshDocument{Pattern: "pairs"}, result.UnitMB)
	if b.Len() != 0 {
		t.Errorf("pairs: %q", b.String())
	}
}
