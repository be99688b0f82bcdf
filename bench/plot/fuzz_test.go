package plot

import (
	"path/filepath"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/resulttest"
)

// FuzzPlot: plot's reading end to end: what the validation step passes is
// drawn as every plot of its kind (results: each --kind; mesh: the
// heatmap; cliffs: the cliffs plot), within the memory ceiling.
func FuzzPlot(f *testing.F) {
	resulttest.Seed(f)
	out := filepath.Join(f.TempDir(), "plot.svg")
	f.Fuzz(func(t *testing.T, data []byte) {
		resulttest.Bounded(t, func() {
			kind, err := result.CheckAny(data)
			if err != nil {
				return
			}
			switch kind {
			case "result":
				doc, _ := result.ParseDocument(data, "fuzz")
				for _, k := range KindNames {
					_, _ = Draw([]*result.Document{doc}, []string{"fuzz"}, k, Selection{}, out)
				}
			case result.KindMesh:
				doc, _ := result.ParseMesh(data, "fuzz")
				_ = Heatmap(doc, Selection{}, out)
			case result.KindCliffs:
				doc, _ := result.ReadCliffs(data)
				_ = Cliffs(doc, out)
			}
		})
	})
}
