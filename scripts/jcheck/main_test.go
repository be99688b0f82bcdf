package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestRun: the checks guest-test.sh makes, over a real guest document.
func TestRun(t *testing.T) {
	cm := "../../bench/result/testdata/guest/cm.json"
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{cm, `**.method == "rdma_cm"`, `**.setup_p50_ns >= 0`, `**.inline_size_granted`, `**.link_utilization > 0`, `**.link_utilization < 1`, `**.cpu`}, 0, ""},
		{[]string{cm, `results[0].mode == "bw"`, `count(results.*.op == "write") == 1`, `**.gid_reason ~ "chosen by rdma_cm for 192.0.2.1"`}, 0, ""},
		{[]string{cm, `**.method == "exchange"`}, 1, `**.method == "exchange" does not hold; at **.method: "rdma_cm"`},
		{[]string{cm, `count(results.* ) == 99`}, 1, "does not hold"},
		{[]string{cm, `**.no_such_field`}, 1, "at **.no_such_field: nothing"},
		{[]string{cm, `results[0].op`, cm, `results[5].op`}, 1, "results[5].op"},
		{[]string{cm, `results[0].op < "x"`}, 2, ""},
		{[]string{cm, `**.device ~ 3`}, 2, ""},
		{[]string{"nope.json", `a`}, 2, ""},
		{[]string{`a == 1`}, 2, ""},
	} {
		var out, errw bytes.Buffer
		code := run(c.args, &out, &errw)
		if code != c.code || !strings.Contains(out.String(), c.out) {
			t.Errorf("%q: exit %d, out %q (stderr %q); want %d, %q", c.args, code, out.String(), errw.String(), c.code, c.out)
		}
	}
}

// TestGuestScriptChecks: every check guest-test.sh gives jcheck parses
// (the guest is the only place they run).
func TestGuestScriptChecks(t *testing.T) {
	b, err := os.ReadFile("../../scripts/guest-test.sh")
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile(`'([^']*)'`)
	n, in := 0, false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "jcheck /") {
			in = true
			line = line[strings.Index(line, "jcheck /"):]
		}
		if !in {
			continue
		}
		for _, m := range quoted.FindAllStringSubmatch(line, -1) {
			if _, err := parseCheck(m[1]); err != nil {
				t.Errorf("%q: %v", m[1], err)
			}
			n++
		}
		in = strings.HasSuffix(line, "\\") && !strings.Contains(line, "|| fail")
	}
	if n < 30 {
		t.Errorf("only %d checks found in guest-test.sh", n)
	}
}
