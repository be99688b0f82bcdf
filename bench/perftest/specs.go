package perftest

import (
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// Specs maps the options to rdmabench's tests, one per size: perftest's
// meaning of each flag (docs/perftest.md) in bench/spec's terms.
// rdmabench's warm-up stays (Warmup -1, its default); the drop-in facing a
// real perftest turns it off (peer.Run).
func Specs(o Options) ([]spec.Spec, error) {
	t := spec.Spec{
		Warmup: -1, QPTimeout: spec.DefaultQPTimeout, RetryCount: spec.DefaultRetryCount, RNRRetry: spec.DefaultRNRRetry,
		InlinePolicy: spec.InlinePerftest, MTU: o.MTU, QPType: strings.ToLower(o.ConnOrDefault()), Event: o.Events,
		OutstandingReads: o.OutReads, SL: o.SL, TClass: o.TClass, SRQ: o.SRQ, HugePages: o.HugePages, RDMACM: o.RDMACM,
		Verify: o.Verify, NoRelaxedOrdering: o.NoRelaxed, PKeyIndex: o.PKeyIndex, CompVector: o.Vector,
	}
	if o.Inline >= 0 {
		t.InlinePolicy, t.Inline = spec.InlineSize, o.Inline
	}
	if o.QPTimeout > 0 {
		t.QPTimeout = o.QPTimeout
	}
	if o.RetryCount > 0 {
		t.RetryCount = o.RetryCount
	}
	if o.ODP {
		t.MRMode = result.MRModeODP
	}
	if o.Duration > 0 {
		t.Duration = time.Duration(o.Duration) * time.Second
	} else {
		t.Iters = o.ItersOrDefault()
	}
	if !o.Tool.Lat {
		t.TxDepth, t.CQMod, t.PostList, t.Bidirectional = o.TxDepthOrDefault(), o.CQModOrDefault(), o.PostList, o.Bidir
		t.QPs, t.Threads = o.QPs, 1 // perftest drives all its QPs from one thread
		if t.Iters > 0 {
			t.Iters *= int64(o.QPsOrDefault()) // perftest's -n is per QP, rdmabench's the total
		}
	}
	t.RxDepth = o.RxDepthOrDefault()
	mtu := o.MTU
	if mtu == 0 {
		mtu = 4096
	}
	sizes := o.Sizes(mtu)
	if o.Conn == "UD" && o.MTU > 0 && !o.Given["size"] { // one packet: perftest cuts its default size to the MTU (-m); a larger -s is refused
		for i := range sizes {
			sizes[i] = min(sizes[i], o.MTU)
		}
	}
	plan := spec.Plan{Template: t, Ops: []string{o.Op()}, Modes: []string{o.Tool.Mode()}, Sizes: sizes}
	return plan.Specs()
}
