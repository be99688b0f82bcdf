package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
)

var fabricFixtures = []string{
	"../../bench/fabric/testdata/roce.json",
	"../../bench/fabric/testdata/iwarp.json",
	"../../bench/fabric/testdata/tcp.json",
}

func TestReportCommand(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "latency.svg")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"text", fabricFixtures, 0, " test           metric         RoCE rxe1 (rdma_rxe)   iWARP siw1 (siw)           TCP lo  flags\n"},
		{"markdown and plot", append([]string{"--format", "markdown", "--plot", svg}, fabricFixtures...), 0, "| **read lat 2B** |"},
		{"no files", nil, exitUsage, "report needs one or more result files"},
		{"bad format", append([]string{"--format", "html"}, fabricFixtures...), exitUsage, `format "html" unknown`},
		{"bad unit", append([]string{"--unit", "KB"}, fabricFixtures...), exitUsage, `unit "KB" unknown`},
		{"bad plot", append([]string{"--plot", "x.pdf"}, fabricFixtures...), exitUsage, "x.pdf"},
		{"missing file", []string{"no-such.json"}, exitInput, "no-such.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(append([]string{"report"}, tt.args...), &out, &errOut)
			all := out.String() + errOut.String()
			if code != tt.wantCode || !strings.Contains(all, tt.wantOut) {
				t.Fatalf("exit %d (want %d), output lacks %q:\n%s", code, tt.wantCode, tt.wantOut, all)
			}
			if strings.Contains(out.String(), "wrote ") {
				t.Errorf("'wrote' on stdout, which scripts redirect to report.md:\n%s", out.String())
			}
		})
	}
	if st, err := os.Stat(svg); err != nil || st.Size() == 0 {
		t.Errorf("--plot %s: %v", svg, err)
	}
}

// TestReportTSV: report --tsv prints a header and one line per result with
// the values of the JSON (what scripts/hw-check.sh reads), n/a for a
// percentile with too few samples, and refuses the comparison's flags.
func TestReportTSV(t *testing.T) {
	var out, errOut bytes.Buffer
	roce := fabricFixtures[0]
	if code := run([]string{"report", "--tsv", roce}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if got := strings.Join(report.ResultsTSVColumns, "\t"); lines[0] != got {
		t.Errorf("header %q, want %q", lines[0], got)
	}
	want := roce + "\tsend\tlat\t2\t2000\t17903.5\t6148095.5\t0.00516093237444457\t0.0027058149127327947\trxe1\t1\t1\tRoCE\t44.0\ttsc"
	if lines[1] != want {
		t.Errorf("first row\n%q\nwant\n%q", lines[1], want)
	}
	doc, err := result.ReadJSONFile(roce)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1+len(doc.Results) {
		t.Errorf("%d lines for %d results", len(lines), len(doc.Results))
	}
	var b bytes.Buffer
	doc.Results = doc.Results[:1]
	doc.Results[0].Latency.P99 = result.Nanos{}
	doc.Env.RDMACoreVersion = ""
	if err := report.WriteResultsTSV(&b, "x", doc); err != nil {
		t.Fatal(err)
	}
	if f := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\t"); f[6] != "n/a" || f[13] != "" || len(f) != len(report.ResultsTSVColumns) {
		t.Errorf("n/a p99 and no rdma-core version: %q", f)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--tsv", "--format", "markdown", roce}, exitUsage, "--format does not apply"},
		{[]string{"--tsv"}, exitUsage, "report --tsv needs one or more result files"},
		{[]string{"--tsv", "no-such.json"}, exitInput, "no-such.json"},
	} {
		out.Reset()
		errOut.Reset()
		if code := run(append([]string{"report"}, c.args...), &out, &errOut); code != c.code || !strings.Contains(errOut.String(), c.msg) {
			t.Errorf("%q: exit %d (want %d), %q", c.args, code, c.code, errOut.String())
		}
	}
}

// TestDevicesTSV: devices --tsv FILE prints the ports of a saved 'devices
// --json' document, one line each, the first IPv4 address, empty fields
// for what a port lacks.
func TestDevicesTSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "devices.json")
	doc := `[{"name":"mlx5_1","driver":"mlx5_core","firmware":"28.1","transport":"RoCE","ports":[
	  {"port":1,"state":"PORT_ACTIVE","link_layer":"Ethernet","active_mtu":4096,"speed":"100.0 Gbps","width":"4X","gids":[],"netdev":"ens1","addresses":["fe80::1","198.51.100.2","198.51.100.3"]},
	  {"port":2,"state":"PORT_DOWN","link_layer":"Ethernet","active_mtu":1024,"speed":"","width":"","gids":[]}]}]`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"devices", "--tsv", path}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := "device\tport\tstate\ttransport\tlink_layer\tdriver\tfirmware\tspeed\twidth\tactive_mtu\tnetdev\tipv4\n" +
		"mlx5_1\t1\tPORT_ACTIVE\tRoCE\tEthernet\tmlx5_core\t28.1\t100.0 Gbps\t4X\t4096\tens1\t198.51.100.2\n" +
		"mlx5_1\t2\tPORT_DOWN\tRoCE\tEthernet\tmlx5_core\t28.1\t\t\t1024\t\t\n"
	if out.String() != want {
		t.Errorf("got\n%q\nwant\n%q", out.String(), want)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--json", "--tsv"}, exitUsage, "--json or --tsv, not both"},
		{[]string{path}, exitUsage, "devices takes no arguments"},
		{[]string{"--tsv", path, path}, exitUsage, "devices takes no arguments"},
		{[]string{"--tsv", filepath.Join(t.TempDir(), "none.json")}, exitInput, "none.json"},
		{[]string{"--tsv", fabricFixtures[0]}, exitInput, "not a 'devices --json' document"},
	} {
		out.Reset()
		errOut.Reset()
		if code := run(append([]string{"devices"}, c.args...), &out, &errOut); code != c.code || !strings.Contains(errOut.String(), c.msg) {
			t.Errorf("%q: exit %d (want %d), %q", c.args, code, c.code, errOut.String())
		}
	}
}
