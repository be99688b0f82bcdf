package bench

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

func TestInlinePolicyValidate(t *testing.T) {
	base := spec.Spec{Op: "send", Mode: "lat", Size: 2, Iters: 10, TxDepth: 1, CQMod: 1, RxDepth: 1}
	for _, tc := range []struct {
		policy string
		size   int
		ok     bool
	}{{spec.InlineAuto, 0, true}, {spec.InlinePerftest, 0, true}, {spec.InlineSize, 0, true}, {spec.InlineSize, 64, true}, {spec.InlineAuto, 64, false}, {"bogus", 0, false}} {
		s := base
		s.InlinePolicy, s.Inline = tc.policy, tc.size
		if err := s.Validate(); (err == nil) != tc.ok {
			t.Errorf("policy %q size %d: %v", tc.policy, tc.size, err)
		}
	}
}

// TestRDMAInlineDefaults: without --inline-size, latency SEND and WRITE go
// inline up to what the device grants (rxe: 512), capped at perftest's 236
// and 220; bandwidth and READ send nothing inline; --inline-size perftest
// gives 0 on rxe and says why; a size above the device's limit is refused
// with the limit before any traffic.
func TestRDMAInlineDefaults(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend, result.OpWrite, result.OpRead}, Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{2},
		Template: spec.Spec{Iters: 300, Warmup: 10}})
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"send lat": 236, "write lat": 220, "read lat": 0, "send bw": 0, "write bw": 0, "read bw": 0}
	for _, r := range doc.Results {
		k := r.Op + " " + r.Mode
		if r.Inline != want[k] || r.InlineReason == "" {
			t.Errorf("%s: inline %d (%q), want %d", k, r.Inline, r.InlineReason, want[k])
		}
		if k == "send lat" && !strings.Contains(r.InlineReason, "grants up to 512 B on RC QPs") {
			t.Errorf("send lat reason %q lacks the probed limit", r.InlineReason)
		}
		if r.Op == "read" && r.Mode == "bw" && r.OutstandingReads < 16 {
			t.Errorf("read bw outstanding reads %d: want the device maximum", r.OutstandingReads)
		}
		if r.QPTimeout != spec.DefaultQPTimeout || r.RetryCount != spec.DefaultRetryCount || r.RNRRetry != spec.DefaultRNRRetry {
			t.Errorf("%s: QP attributes %d/%d/%d in the result", k, r.QPTimeout, r.RetryCount, r.RNRRetry)
		}
	}

	pt := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 200, InlinePolicy: spec.InlinePerftest, OutstandingReads: 4}})
	doc, err = RunLoopback(context.Background(), runCfg(pt), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	if r := doc.Results[0]; r.Inline != 0 || !strings.Contains(r.InlineReason, "does not recognise") {
		t.Errorf("--inline-size perftest on rxe: %d %q", r.Inline, r.InlineReason)
	}

	big := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 100, InlinePolicy: spec.InlineSize, Inline: 1024}})
	_, err = RunLoopback(context.Background(), runCfg(big), testLog(t))
	if !errors.Is(err, verbs.ErrNotSupported) || !strings.Contains(err.Error(), "at most 512 bytes") {
		t.Errorf("--inline-size 1024 on rxe: %v", err)
	}
}
