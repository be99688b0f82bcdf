package mesh

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// outputDoc is a two-rank document on device dev with one pair, failed
// or measured (one SEND latency result).
func outputDoc(dev string, failed bool) *result.MeshDocument {
	d := &result.MeshDocument{Pattern: "pairs", Rounds: 1, Outcome: result.MeshComplete}
	for r := range 2 {
		d.Ranks = append(d.Ranks, result.MeshRank{Rank: r, Host: "h" + string(rune('a'+r)), Device: dev, Status: result.StatusOK})
	}
	p := result.MeshPair{Client: 0, Server: 1, ClientHost: "ha", ServerHost: "hb", Status: result.StatusOK}
	if failed {
		p.Status, p.Error, d.Outcome = result.StatusFailed, "boom", result.MeshPartial
	} else {
		lat := result.Result{Op: "send", Mode: "lat", SizeBytes: 2}
		lat.Latency.P50 = result.Nanos{NS: 5000, OK: true}
		p.Results = []result.Result{lat}
	}
	d.Pairs = []result.MeshPair{p}
	return d
}

func TestOutput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name          string
		out           *Outcome
		json          string
		files         []string // written, under dir
		text, notText []string
		failed, total int
	}{
		{name: "one document, no file", out: &Outcome{Doc: outputDoc("rxe0", false)},
			text: []string{"mesh: 2 ranks, pattern pairs", "send lat 2B"}, notText: []string{"== rail"}, total: 1},
		{name: "one document to a file", out: &Outcome{Doc: outputDoc("rxe0", true)}, json: "one.json",
			files: []string{"one.json"}, text: []string{"1 failed", "boom"}, failed: 1, total: 1},
		{name: "rails: a heading and a file each", out: &Outcome{Doc: outputDoc("rxe0", false), Rails: []*result.MeshDocument{outputDoc("rxe0", false), outputDoc("rxe1", true)}},
			json: "rails.json", files: []string{"rails.rail0.json", "rails.rail1.json"},
			text: []string{"== rail 0: ha(0) rxe0, hb(1) rxe0 ==", "== rail 1: ha(0) rxe1, hb(1) rxe1 ==", "rail 1"}, failed: 1, total: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			c := OutputConfig{Unit: result.UnitMiB, OutlierK: 3, W: &b}
			if tc.json != "" {
				c.JSON = filepath.Join(dir, tc.json)
			}
			failed, total, err := Output(tc.out, c)
			if err != nil {
				t.Fatal(err)
			}
			if failed != tc.failed || total != tc.total {
				t.Errorf("failed, total = %d, %d; want %d, %d", failed, total, tc.failed, tc.total)
			}
			for _, f := range tc.files {
				data, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				var doc result.MeshDocument
				if err := json.Unmarshal(data, &doc); err != nil || len(doc.Pairs) != 1 || doc.Kind != result.KindMesh {
					t.Errorf("%s: %v, %d pairs, kind %q", f, err, len(doc.Pairs), doc.Kind)
				}
			}
			for _, w := range tc.text {
				if !strings.Contains(b.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.notText {
				if strings.Contains(b.String(), w) {
					t.Errorf("report has %q:\n%s", w, b.String())
				}
			}
		})
	}
}

func TestOutcomeCounts(t *testing.T) {
	o := &Outcome{Own: []result.MeshPair{{Status: result.StatusOK}, {Status: result.StatusFailed}, {Status: result.StatusFailed}}}
	if got := o.OwnFailed(); got != 2 {
		t.Errorf("OwnFailed = %d, want 2", got)
	}
	if o.Docs() != nil {
		t.Errorf("Docs on a rank other than 0 = %v, want nil", o.Docs())
	}
}
