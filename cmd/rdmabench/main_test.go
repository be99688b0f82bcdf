package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/sockeng"
	"github.com/rdmabench/rdmabench/verbs"
)

const fixtureA = "../../bench/compare/testdata/a.json"

// withP99Regression writes a copy of fixtureA whose first latency test's p99
// is 20 % worse.
func withP99Regression(t *testing.T) (string, string) {
	t.Helper()
	doc, err := result.ReadJSONFile(fixtureA)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	for i := range doc.Results {
		r := &doc.Results[i]
		if r.Mode == result.ModeLat && r.Latency.P99.OK {
			r.Latency.P99.NS *= 1.2
			name = r.Op + " " + r.Mode
			break
		}
	}
	path := filepath.Join(t.TempDir(), "new.json")
	if err := result.WriteJSONFile(path, doc); err != nil {
		t.Fatal(err)
	}
	return path, name
}

func TestCompareGateExitCodes(t *testing.T) {
	regressed, name := withP99Regression(t)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"same file passes", []string{"compare", "--baseline", fixtureA, fixtureA, "--max-regress", "p99=10%,bw=5%"}, 0, "no regressions"},
		{"20% p99 regression fails", []string{"compare", "--baseline", fixtureA, regressed, "--max-regress", "p99=10%"}, 1, "REGRESSION " + name},
		{"within a 25% limit passes", []string{"compare", "--baseline", fixtureA, regressed, "--max-regress", "p99=25%"}, 0, "no regressions"},
		{"bad limit is a usage error", []string{"compare", "--baseline", fixtureA, regressed, "--max-regress", "p99=ten"}, 2, "p99=ten"},
		{"markdown table", []string{"compare", fixtureA, regressed, "--format", "markdown"}, 0, "| test |"},
	}
	for _, tt := range tests {
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

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"loopback", "--size", "0"},
		{"loopback", "--op", "flush"},
		{"loopback", "--iters", "10", "--duration", "1s"},
		{"loopback", "--unit", "furlongs"},
		{"loopback", "--cpu", "999"},
		{"loopback", "--verify", "--op", "fetch_add"},
		{"loopback", "--verify", "--transport", "tcp"},
		{"loopback", "--srq", "--op", "write"},
		{"loopback", "--srq", "--qp-type", "uc"},
		{"loopback", "--srq", "--transport", "tcp"},
		{"server", "--cpu", "x"},
		{"run"},
		{"nosuchcommand"},
	} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != exitUsage {
			t.Errorf("%q: exit %d, want %d (%s)", args, code, exitUsage, errOut.String())
		}
	}
}

func TestDevicePath(t *testing.T) {
	for _, tc := range []struct {
		path, dev string
		n         int
		want      string
	}{
		{"out.json", "rxe1", 1, "out.json"},
		{"out.json", "rxe1", 2, "out-rxe1.json"},
		{"dir/r", "mlx5_0", 3, "dir/r-mlx5_0"},
		{"", "rxe1", 2, ""},
		{"-", "rxe1", 2, "-"},
	} {
		if got := devicePath(tc.path, tc.dev, tc.n); got != tc.want {
			t.Errorf("devicePath(%q, %q, %d) = %q, want %q", tc.path, tc.dev, tc.n, got, tc.want)
		}
	}
}

// TestExitCodeTransport: data-path failures of both engines exit with
// exitTransport.
func TestExitCodeTransport(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("latency client: %w", verbs.ErrTimeout),
		&verbs.WCError{Status: verbs.WCRetryExcErr},
		fmt.Errorf("TCP latency client: %w", sockeng.ErrTimeout),
		&sockeng.PeerClosedError{Loop: "TCP latency responder"},
		&kinds.VerifyError{Op: "send", Checker: "server", Messages: 64, Size: 64, Len: 64, Offset: 3, Expected: 1, Seen: 2},
	} {
		if got := exitCode(fmt.Errorf("send lat 2B: %w", err)); got != exitTransport {
			t.Errorf("exitCode(%v) = %d, want %d", err, got, exitTransport)
		}
	}
}

// TestExitCodeDeviceLimit: a QP the device cannot size within max_qp_wr
// (mlx5's WQE blocks: ibv_create_qp EINVAL or ENOMEM), on this side or
// the server's, exits 3 as the device limits checked beforehand do, not 1
// (any failure) or 4 (the peer).
func TestExitCodeDeviceLimit(t *testing.T) {
	for _, err := range []error{
		&verbs.Error{Op: "ibv_create_qp", Detail: "RC, send_wr 8192, recv_wr 512, inline 256", Err: syscall.EINVAL},
		&verbs.Error{Op: "ibv_create_qp", Err: syscall.ENOMEM},
		&proto.RemoteError{Msg: "ibv_create_qp: invalid argument", Code: device.CodeLimit},
	} {
		if got := exitCode(fmt.Errorf("send bw 64B: %w", err)); got != exitEnv {
			t.Errorf("exitCode(%v) = %d, want %d", err, got, exitEnv)
		}
	}
}

// TestBidirFlags: -b and --report-both are refused where they do not apply,
// by name, before any device is opened.
func TestBidirFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"loopback", "--op", "write", "--mode", "bw", "--report-both"}, "--report-both reports the two sides of a bidirectional test: add -b"},
		{[]string{"loopback", "--op", "write", "--mode", "lat", "-b"}, "-b (bidirectional) applies to bandwidth tests"},
		{[]string{"loopback", "--op", "send", "--mode", "bw", "-b", "--qps", "2"}, "-b (bidirectional) with --qps 2 is not supported"},
		{[]string{"loopback", "--op", "send", "--mode", "bw", "--bidirectional", "--qp-type", "ud", "--size", "1024"}, "SEND on UD QPs is not supported"},
		{[]string{"loopback", "--transport", "tcp", "--mode", "bw", "-b"}, "not to the TCP baseline"},
		{[]string{"loopback", "--op", "write", "--mode", "bw", "-b", "--mr-mode", "per-op"}, "--mr-mode per-op is not supported"},
		{[]string{"loopback", "--op", "write", "--mode", "bw", "-b", "--verify"}, "-b (bidirectional) with --verify is not supported"},
	} {
		var out, errOut bytes.Buffer
		if code := run(c.args, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%q: exit %d (want %d), stderr lacks %q:\n%s", c.args, code, exitUsage, c.want, errOut.String())
		}
	}
}
