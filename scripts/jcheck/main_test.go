package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestRun: checks of the kind the guest scripts make, over a real guest document.
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
