package accept

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/expect"
	"github.com/rdmabench/rdmabench/bench/result"
)

func nic(dev, verdict string, reasons ...string) result.AcceptNIC {
	return result.AcceptNIC{Device: dev, Port: 1, RateGbps: 400, NUMANode: 0, Verdict: verdict, Reasons: reasons,
		Checks: []result.AcceptCheck{{Verdict: verdict}}}
}

// TestTableAndOutcome: the summary names each NIC's verdict and why, and
// the node's verdict maps to the expectation outcomes (exit 0, 11, 12).
func TestTableAndOutcome(t *testing.T) {
	for _, c := range []struct {
		nics    []result.AcceptNIC
		verdict string
		as      func(error) bool
		lines   []string
	}{
		{[]result.AcceptNIC{nic("mlx5_0", "pass"), nic("mlx5_1", "pass")}, "pass", func(err error) bool { return err == nil },
			[]string{"mlx5_0       1    0      400 Gb/s     PASS", "node: PASS (pass: mlx5_0, mlx5_1)"}},
		{[]result.AcceptNIC{nic("mlx5_0", "pass"), nic("mlx5_1", "fail", "write bw 64K: ... FAIL: 201.3 Gb/s"), nic("mlx5_2", "cannot tell", "send bw: CANNOT TELL")},
			"fail", func(err error) bool { var e *expect.FailError; return errors.As(err, &e) },
			[]string{"mlx5_1 port 1: FAIL, because\n  write bw 64K: ... FAIL: 201.3 Gb/s", "node: FAIL (pass: mlx5_0; cannot tell: mlx5_2; fail: mlx5_1)"}},
		{[]result.AcceptNIC{nic("mlx5_0", "pass"), nic("mlx5_2", "cannot tell", "send bw: CANNOT TELL")},
			"cannot tell", func(err error) bool { var e *expect.CannotTellError; return errors.As(err, &e) },
			[]string{"node: CANNOT TELL"}},
	} {
		vs := []string{}
		for _, n := range c.nics {
			vs = append(vs, n.Verdict)
		}
		doc := &result.AcceptDocument{Host: "h", Confidence: 0.95, NICs: c.nics, Verdict: result.AcceptWorst(vs...),
			Thresholds: result.AcceptThresholds{BW: "90%", LatWriteSend: "p50=2.5us", LatRead: "p50=4.5us", Repeat: 3}}
		if doc.Verdict != c.verdict {
			t.Errorf("verdict %q, want %q", doc.Verdict, c.verdict)
		}
		var b strings.Builder
		if err := WriteTable(&b, doc); err != nil {
			t.Fatal(err)
		}
		for _, l := range c.lines {
			if !strings.Contains(b.String(), l) {
				t.Errorf("the table lacks %q:\n%s", l, b.String())
			}
		}
		if err := Outcome(doc); !c.as(err) {
			t.Errorf("%s: Outcome = %v", c.verdict, err)
		}
	}
}

func TestCheck(t *testing.T) {
	l, _ := expect.ParseLat("p99.99=3us")
	if err := Check(Config{LatRead: l, Iters: 10}); err != nil {
		t.Errorf("p99.99 is a default percentile: %v", err)
	}
	if err := Check(Config{}); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}

func TestNoActivePort(t *testing.T) {
	doc := &result.AcceptDocument{Verdict: result.VerdictAcceptFail, Skipped: []string{"mlx5_0 port 1: PORT_DOWN"}}
	if err := Outcome(doc); !errors.Is(err, device.ErrPortNotActive) || !strings.Contains(err.Error(), "PORT_DOWN") {
		t.Errorf("Outcome = %v", err)
	}
}
