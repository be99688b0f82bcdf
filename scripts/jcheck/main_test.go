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

// TestSelect: [KEY=VALUE] picks the objects whose KEY holds VALUE.
func TestSelect(t *testing.T) {
	f := t.TempDir() + "/doctor.json"
	doc := `{"findings": [{"check": "mtu", "status": "pass"}, {"check": "peer-mtu", "status": "fail"}], "qps": [{"id": 3, "ops": 7}]}`
	if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		check string
		code  int
	}{
		{`findings[check=peer-mtu].status == "fail"`, 0},
		{`findings[check=mtu].status == "fail"`, 1}, // the other element's status does not count
		{`findings[check=governor]`, 1},
		{`qps[id=3].ops == 7`, 0},
		{`count(findings[status=pass]) == 1`, 0},
	} {
		var out, errw bytes.Buffer
		if code := run([]string{f, c.check}, &out, &errw); code != c.code {
			t.Errorf("%s: exit %d (%s%s), want %d", c.check, code, out.String(), errw.String(), c.code)
		}
	}
}

// TestGuestScriptChecks: every check the guest scripts give jcheck parses
// (the guests are the only place they run).
func TestGuestScriptChecks(t *testing.T) {
	for script, least := range map[string]int{"guest-test.sh": 30} {
		t.Run(script, func(t *testing.T) { scriptChecks(t, "../../scripts/"+script, least) })
	}
}

func scriptChecks(t *testing.T, path string, least int) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile(`'([^']*)'`)
	n, in := 0, false
	for _, line := range strings.Split(string(b), "\n") {
		if i := max(strings.Index(line, "jcheck /"), strings.Index(line, "check_json /")); i >= 0 {
			in = true
			line = line[i:]
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
	if n < least {
		t.Errorf("only %d checks found in %s, want at least %d", n, path, least)
	}
}
