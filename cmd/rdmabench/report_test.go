package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
