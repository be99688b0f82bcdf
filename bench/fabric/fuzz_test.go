package fabric

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/resulttest"
)

// FuzzReport: report's reading end to end: what the validation step
// passes is laid out as text and Markdown, alone and beside itself, and
// plotted, within the memory ceiling.
func FuzzReport(f *testing.F) {
	resulttest.Seed(f)
	out := filepath.Join(f.TempDir(), "report.svg")
	f.Fuzz(func(t *testing.T, data []byte) {
		resulttest.Bounded(t, func() {
			doc, err := result.ParseDocument(data, "fuzz")
			if err != nil {
				return
			}
			for _, docs := range [][]*result.Document{{doc}, {doc, doc}} {
				rep := New(docs)
				_ = rep.WriteText(io.Discard, result.UnitMiB, report.Width)
				_ = rep.WriteMarkdown(io.Discard, result.UnitGb)
			}
			_ = New([]*result.Document{doc}).Plot(out)
		})
	})
}
