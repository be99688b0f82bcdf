package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestIsolationRefusals: bad input is refused before any device is
// opened (exit 2), naming the value and the limit.
func TestIsolationRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"isolation", "--attackers", "noisy"}, `attacker "noisy" unknown; valid: bw-hog, small-flood, rnr-storm, pcie-sizes, qp-thrash, mr-thrash, mr-churn (or all)`},
		{[]string{"isolation", "--max-inflation", "p99=0.5x"}, "a latency bound below 1x"},
		{[]string{"isolation", "--max-inflation", "p98=2x"}, `figure "p98" unknown`},
		{[]string{"isolation", "--load-qps", "2"}, "the attackers are the victim's load: drop --load-qps"},
		{[]string{"isolation", "--mode", "bw"}, "the victim is a latency test, not send bw: use --mode lat"},
		{[]string{"isolation", "-s", "2,64"}, "isolation measures one victim test"},
		{[]string{"isolation", "--transport", "tcp"}, "isolation measures an RDMA victim"},
		{[]string{"isolation", "--repeat", "101"}, "--repeat 101: want 1..100 runs"},
		{[]string{"isolation", "--repeat", "0"}, "--repeat 0"},
		{[]string{"isolation", "--cpu", "x"}, "--cpu"},
		{[]string{"isolation", "a", "b"}, "isolation takes at most one argument"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errb.String(), exitUsage, c.want)
		}
	}
}
