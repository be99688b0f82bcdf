package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// withRetransmissions writes a copy of fixtureA whose tests all have port
// counters, the first with 373 retransmissions on the server.
func withRetransmissions(t *testing.T) string {
	t.Helper()
	doc, err := result.ReadJSONFile(fixtureA)
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc.Results {
		c := &result.CounterDeltas{
			Client: &result.PortCounters{Device: "rxe0", Port: 1, Deltas: map[string]int64{"sent_pkts": 4400}},
			Server: &result.PortCounters{Device: "rxe0", Port: 1, Deltas: map[string]int64{"sent_pkts": 4400}},
		}
		if i == 0 {
			c.Server.Deltas["completer_retry_err"] = 373
		}
		doc.Results[i].Counters = c
	}
	path := filepath.Join(t.TempDir(), "counters.json")
	if err := result.WriteJSONFile(path, doc); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompareMaxCounter(t *testing.T) {
	cur := withRetransmissions(t)
	name := "send lat 2B"
	for _, tt := range []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"retransmissions fail the gate", []string{"compare", "--baseline", fixtureA, cur, "--max-counter", "retransmissions=0"}, 1,
			"REGRESSION " + name + ": server rxe0 port 1: retransmissions 373 > 0 (completer_retry_err 373) (--max-counter)"},
		{"within the limit", []string{"compare", "--baseline", fixtureA, cur, "--max-counter", "retransmissions=373,sent_pkts=4400"}, 0,
			"no regressions (12 tests, 12 metrics checked, 48 counter limits checked)"},
		{"raw counter", []string{"compare", "--baseline", fixtureA, cur, "--max-counter", "completer_retry_err=10"}, 1,
			"server rxe0 port 1: completer_retry_err 373 > 10 (--max-counter)"},
		{"markdown", []string{"compare", "--baseline", fixtureA, cur, "--max-counter", "retransmissions=0", "--format", "markdown"}, 1,
			"- REGRESSION " + name + ": server"},
		{"no counters in the new run", []string{"compare", "--baseline", cur, fixtureA, "--max-counter", "retransmissions=0"}, 1,
			"none of the counter limits in --max-counter \"retransmissions=0\" could be checked"},
		{"bad limit names the value and the limit", []string{"compare", "--baseline", fixtureA, cur, "--max-counter", "retransmissions=many"}, 2,
			`limit "many" for retransmissions`},
		{"bad name", []string{"compare", "--baseline", fixtureA, cur, "--max-counter", "re tx=1"}, 2, `"re tx" is neither a category`},
		{"needs --baseline", []string{"compare", fixtureA, cur, "--max-counter", "retransmissions=0"}, 2, "--max-counter needs --baseline"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tt.args, &out, &errOut)
			all := out.String() + errOut.String()
			if code != tt.wantCode || !strings.Contains(all, tt.wantOut) {
				t.Fatalf("exit %d (want %d), output lacks %q:\n%s", code, tt.wantCode, tt.wantOut, all)
			}
		})
	}
}
