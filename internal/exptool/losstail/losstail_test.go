package losstail

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/resulttest"
)

func TestLossTable(t *testing.T) {
	dir := t.TempDir()
	for i, name := range []string{"loss-0.json", "loss-1.json", "loss-0.1.json"} {
		doc := resulttest.Document(t)
		doc.Results[0].Counters = &result.CounterDeltas{
			Client: &result.PortCounters{Device: "rxe2", Port: 1, Deltas: map[string]int64{"completer_retry_err": int64(10 * i)}},
			Server: &result.PortCounters{Device: "rxe2", Port: 1, Deltas: map[string]int64{"duplicate_request": int64(7 * i), "sent_pkts": 900}},
		}
		if err := result.WriteJSONFile(filepath.Join(dir, name), doc); err != nil {
			t.Fatal(err)
		}
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "loss-*.json"))
	var b bytes.Buffer
	svg := filepath.Join(dir, "lat.svg")
	if err := run(paths, svg, &b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[2], "| 0 % ") || !strings.HasPrefix(lines[3], "| 0.1 % ") || !strings.HasPrefix(lines[4], "| 1 % ") {
		t.Fatalf("table rows not in loss order:\n%s", b.String())
	}
	if !strings.Contains(lines[3], "| 20, ?, ? | 14, ?, ? |") {
		t.Errorf("0.1 %% row (third file: 20 retransmissions, 14 duplicates on SEND lat): %s", lines[3])
	}
	if fi, err := os.Stat(svg); err != nil || fi.Size() == 0 {
		t.Errorf("plot: %v", err)
	}
	if err := run([]string{filepath.Join(dir, "x.json")}, "", &b); err == nil {
		t.Error("a file not named loss-<rate>.json was accepted")
	}
}
