package compare

import (
	"io"
	"testing"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/resulttest"
)

// FuzzCompare: compare's reading end to end. Whatever the bytes, the one
// validation step (result.CheckAny) decides, and what it passes goes
// through the tables, the gate against itself and a copy, the Go benchmark
// format and the noise report (results), or the mesh tables and gate
// (mesh), within the memory ceiling.
func FuzzCompare(f *testing.F) {
	resulttest.Seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		resulttest.Bounded(t, func() {
			kind, err := result.CheckAny(data)
			if err != nil {
				return
			}
			switch kind {
			case "result":
				doc, err := result.ParseDocument(data, "fuzz")
				if err != nil {
					t.Fatalf("CheckAny passed what ParseDocument refuses: %v", err)
				}
				docs := []*result.Document{doc, doc}
				c := Compare(docs, []string{"a", "b"})
				_ = c.WriteTable(io.Discard, nil, result.UnitMiB, report.Width)
				_ = c.WriteMarkdown(io.Discard, []string{MetricP99_9, MetricMpps}, result.UnitGb)
				_ = WriteGobench(io.Discard, docs)
				_ = Noise(docs, nil).Write(io.Discard, result.UnitMB)
				g := GateWith(doc, doc, map[string]float64{MetricP99: 0.1, MetricBW: 0.05, "p99_999": 0.1}, GateOptions{Alpha: DefaultAlpha, Power: DefaultPower})
				if g.Err() != nil {
					t.Fatalf("a document regresses against itself: %v", g.Err())
				}
				_ = g.PowerErr()
			case result.KindMesh:
				doc, err := result.ParseMesh(data, "fuzz")
				if err != nil {
					t.Fatalf("CheckAny passed what ParseMesh refuses: %v", err)
				}
				docs := []*result.MeshDocument{doc, doc}
				_ = WriteMeshTables(io.Discard, docs, []string{"a", "b"}, nil, result.UnitMiB, report.Width)
				_ = GateMesh(doc, doc, map[string]float64{MetricP99: 0.1})
			}
		})
	})
}
