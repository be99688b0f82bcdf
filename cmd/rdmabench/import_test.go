package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

const perftestData = "../../bench/perftest/testdata/"

// TestImportPerftest: 'rdmabench import perftest' writes a document that
// compare reads, --show prints what the scripts use, and bad input is exit
// 8 (2 for usage), naming what.
func TestImportPerftest(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "pt.json")
	lat, bw := perftestData+"perftest-6.06/send_lat.client.txt", perftestData+"perftest-6.06/write_bw.client.txt"
	for _, c := range []struct {
		code int
		args []string
		out  string // stdout is this
		err  string // in stderr
	}{
		{exitOK, []string{"import", "perftest", lat, bw, "-o", doc, "--perftest-version", "6.06"}, "", ""},
		{exitOK, []string{"compare", fixtureA, doc}, "", ""},
		{exitOK, []string{"import", "perftest", "--show", "row", lat}, "2 1000 12.86 125957.66 14.19 1743.00 3244.36 17948.33 125957.66\n", ""},
		{exitOK, []string{"import", "perftest", "--show", "column:t_typical", lat}, "14.19\n", ""},
		{exitOK, []string{"import", "perftest", "--show", "column:bw_avg", bw}, "62.21\n", ""},
		{exitOK, []string{"import", "perftest", "--show", "setting:Max inline data", lat}, "0[B]\n", ""},
		{exitInput, []string{"import", "perftest", "--show", "setting:RX depth", "--show", "column:bytes", lat, filepath.Join(dir, "none.txt"), bw},
			"\n2\n\n\n\n65536\n", `no "RX depth"`}, // one line per item and file, "" for what a file lacks
		{exitOK, []string{"import", "perftest", "--show", "labels", perftestData + "perftest-6.06/write_bw.server.txt"},
			"title:RDMA_Write BW Test | Dual-port | Device | Number of qps | Transport type | Connection type | Using SRQ | PCIe relax order | ibv_wr* API | CQ Moderation | Mtu | Link type | GID index | Max inline data | rdma_cm QPs | Data ex. method\n", ""},
		{exitInput, []string{"import", "perftest", perftestData + "perftest-newer/send_lat_nan.client.txt"}, "", `column "t_min[usec]": "inf" is not a finite number`},
		{exitInput, []string{"import", "perftest", perftestData + "perftest-6.06/read_lat.server.txt"}, "", "no result table"},
		{exitInput, []string{"import", "perftest", "--show", "column:bw_avg", lat}, "", `no column "bw_avg"`},
		{exitInput, []string{"import", "perftest", filepath.Join(dir, "missing.txt")}, "", "missing.txt"},
		{exitUsage, []string{"import", "qperf", lat}, "", "rdmabench import perftest FILE"},
		{exitUsage, []string{"import", "perftest"}, "", "one or more files"},
		{exitUsage, []string{"import", "perftest", "--tool", "ib_foo_lat", lat}, "", `--tool "ib_foo_lat" unknown`},
		{exitUsage, []string{"import", "perftest", "--show", "everything", lat}, "", `--show "everything" unknown`},
	} {
		var out, errOut bytes.Buffer
		code := run(c.args, &out, &errOut)
		if code != c.code || (c.out != "" && out.String() != c.out) || !strings.Contains(errOut.String(), c.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q, %q", c.args, code, out.String(), errOut.String(), c.code, c.out, c.err)
		}
	}
	d, err := result.ReadJSONFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if d.Tool != "perftest" || d.ToolVersion != "6.06" || len(d.Results) != 2 || d.Results[1].Bandwidth.MiBPerSec != 62.21 {
		t.Errorf("imported: %+v", d)
	}
}

// TestReadersCheckValues: compare, the gate, report and plot refuse a
// document with percentiles out of order, exit 8, naming the field.
func TestReadersCheckValues(t *testing.T) {
	b, err := os.ReadFile(fixtureA)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	field := ""
	for i, r := range doc["results"].([]any) {
		l := r.(map[string]any)["latency_ns"].(map[string]any)
		if l["p99"] != nil && l["p50"] != nil {
			l["p50"] = l["p99"].(float64) * 2
			field = "results[" + string(rune('0'+i)) + "].latency_ns.p90"
			if l["p90"] == nil {
				field = "results[" + string(rune('0'+i)) + "].latency_ns.p99"
			}
			break
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"compare", fixtureA, bad},
		{"compare", "--baseline", fixtureA, bad},
		{"report", bad},
		{"plot", bad, "-o", filepath.Join(t.TempDir(), "p.svg")},
	} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != exitInput || !strings.Contains(errOut.String(), field+": ") {
			t.Errorf("%v: exit %d, stderr %q; want %d naming %s", args, code, errOut.String(), exitInput, field)
		}
	}
}
