package spec

import (
	"fmt"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Spec is one test: what the client asks the server to run. The server
// learns every parameter from it (options are given on the client only).
type Spec struct {
	Op       string        `json:"op"`
	Mode     string        `json:"mode"`
	Size     int           `json:"size_bytes"`
	Iters    int64         `json:"iterations,omitempty"` // measured iterations; 0 with Duration
	Duration time.Duration `json:"duration_ns,omitempty"`
	Warmup   int64         `json:"warmup_iterations"`
	// WarmupTime, when set, warms up for this long instead of Warmup iterations.
	WarmupTime time.Duration `json:"warmup_ns,omitempty"`
	TxDepth    int           `json:"tx_depth"`
	CQMod      int           `json:"cq_mod"`
	RxDepth    int           `json:"rx_depth"`
	// Inline is the inline size, bytes, with InlinePolicy "size"
	// (--inline-size N); 0 otherwise.
	Inline int `json:"inline_bytes"`
	// InlinePolicy is how each side picks its QPs' inline size: "" (auto:
	// the device's probed limit, capped at perftest's latency values),
	// "size" (Inline) or "perftest" (perftest's rules); see inline.go.
	InlinePolicy string `json:"inline_policy,omitempty"`
	MTU          int    `json:"mtu,omitempty"` // requested path MTU, bytes; 0 = the ports' active MTU
	// Transport is "rdma" (default, empty) or "tcp": the kernel TCP baseline.
	Transport string `json:"transport,omitempty"`
	// Rate, when set, runs latency tests open-loop at this many operations per
	// second, on the Schedule ("constant" or "poisson"), and measures each
	// operation from its intended send time (coordinated-omission correction).
	Rate     float64 `json:"rate,omitempty"`
	Schedule string  `json:"schedule,omitempty"`
	// SL is the service level and TClass the GRH traffic class of the QPs.
	SL     int `json:"sl,omitempty"`
	TClass int `json:"tclass,omitempty"`
	// PostList chains this many work requests per post in bandwidth tests
	// (0 or 1: one at a time).
	PostList int `json:"post_list,omitempty"`
	// Event waits for completions on completion channels (interrupts)
	// instead of busy polling.
	Event bool `json:"event,omitempty"`
	// Load, when set on a latency test, streams bandwidth traffic on other
	// QPs while the latency probe QP is measured (latency under load).
	Load *Load `json:"load,omitempty"`
	// QPType is the transport of the measured QP: "rc" (default, empty),
	// "uc" (send and write) or "ud" (send only, at most the path MTU).
	QPType string `json:"qp_type,omitempty"`
	// QPs is the number of measured QPs of a bandwidth test (0 or 1: one),
	// each with its own CQs and engine; Threads client threads (0 or 1: one)
	// drive them, QP i on thread i mod Threads. In iterations mode Iters is
	// the total over all QPs: each QP runs Iters/QPs, the first Iters%QPs
	// one more.
	QPs     int `json:"qps,omitempty"`
	Threads int `json:"threads,omitempty"`
	// MRMode is how the data path registers its memory: "pool" (default,
	// empty), "per-op" or "odp"; see MRModes.
	MRMode string `json:"mr_mode,omitempty"`
	// HugePages maps the data path buffers from 2 MiB huge pages.
	HugePages bool `json:"hugepages,omitempty"`
	// RDMACM creates and connects the QPs with librdmacm (rdma_cm) instead of
	// exchanging QP numbers on the control connection (RC only).
	RDMACM bool `json:"rdma_cm,omitempty"`
	// QPTimeout is the RC local ACK timeout exponent (4.096 µs × 2^n per
	// try, perftest -u), RetryCount the transport retries and RNRRetry the
	// receiver-not-ready retries (7: forever); 0 takes the default.
	QPTimeout  int `json:"qp_timeout,omitempty"`
	RetryCount int `json:"retry_count,omitempty"`
	RNRRetry   int `json:"rnr_retry,omitempty"`
	// OutstandingReads bounds the READ/atomic operations in flight per QP
	// (max_rd_atomic, perftest -o); 0: the device's maximum for READ and
	// atomic tests (perftest's default), 1 for other tests.
	OutstandingReads int `json:"outstanding_reads,omitempty"`
	// Bidirectional runs a bandwidth test in both directions at once
	// (perftest -b): the server posts the same operation towards the
	// client's memory while the client posts towards the server's, both
	// from one barrier; see bidir.go.
	Bidirectional bool `json:"bidirectional,omitempty"`
	// Verify checks payloads (--verify) in a pass after the measured run,
	// outside every timed interval: the client fills each of
	// verifyMessages messages with a pattern of the test and the message,
	// the server checks what SENDs and WRITEs delivered, the client what
	// its READs fetched (the server filled it). See verify.go.
	Verify bool `json:"verify,omitempty"`
	// SRQ makes the receiving QPs of a SEND test take their receives from
	// one shared receive queue per side (--srq): the server's QPs (all
	// --qps of them), and in latency tests, where the client receives the
	// replies, the client's QP too. See srq.go.
	SRQ bool `json:"srq,omitempty"`
	// Percentiles are the latency percentiles the results report, with
	// their confidence intervals at Confidence (--percentiles,
	// --confidence); empty and 0: result.DefaultPercentiles at 95 %. The
	// client's business: the server ignores them. See percentiles.go.
	Percentiles []float64 `json:"percentiles,omitempty"`
	Confidence  float64   `json:"confidence,omitempty"`
	// Repeat runs the test this many times, each on fresh QPs (--repeat):
	// the result holds each run's figures, their medians and spread
	// (result.CombineRuns). 0 and 1: once.
	Repeat int `json:"repeat,omitempty"`
	// LimitBW (bytes/s) and LimitMsgRate (messages/s) shape the client's
	// sending (--limit-bw, --limit-msgrate; the lower wins): in bandwidth
	// tests its measured QPs together, in latency-under-load tests its
	// load QPs together. Enforced in the C loop. See shape.go.
	LimitBW      float64 `json:"limit_bw,omitempty"`
	LimitMsgRate float64 `json:"limit_msgrate,omitempty"`
	// LoadSweep runs a latency-under-load test as a sweep over these
	// fractions of the load's peak (--load-sweep): see loadsweep.go. The
	// client's business: the server sees each step as a test of its own.
	LoadSweep []float64 `json:"load_sweep,omitempty"`
	// The differences from perftest that are options (choices.go); the
	// zero values are perftest's defaults.
	// NoRelaxedOrdering registers without IBV_ACCESS_RELAXED_ORDERING
	// (--disable-pcie-relaxed).
	NoRelaxedOrdering bool `json:"no_relaxed_ordering,omitempty"`
	// NoAddrStep posts every bandwidth work request at the same local and
	// remote addresses (--no-addr-step); AddrCycle is the cycle buffer the
	// addresses step over otherwise, bytes (the client's page size).
	NoAddrStep bool `json:"no_addr_step,omitempty"`
	AddrCycle  int  `json:"addr_cycle_bytes,omitempty"`
	// CompVector is the completion vector of every CQ (--comp-vector N);
	// with CompVectorSpread the CQs go round robin over the device's
	// vectors instead (--comp-vector spread).
	CompVector       int  `json:"comp_vector,omitempty"`
	CompVectorSpread bool `json:"comp_vector_spread,omitempty"`
	// PKeyIndex is the P_Key table index of the QPs (--pkey-index).
	PKeyIndex int `json:"pkey_index,omitempty"`
	// The workload knobs (workload.go; zero values: perftest's one
	// target, one MR, one SGE). Region spreads the remote targets of
	// READ, WRITE and atomics over a region of this many bytes that the
	// target side registers (--region); Access is how each operation
	// picks its offset ("seq", "random", "stride"; --access), Stride the
	// bytes between offsets of "stride", Seed the PRNG seed of "random"
	// (0: DefaultSeed). MRs splits the region, and the initiator's local
	// buffers, into this many MRs (--mrs; 0, 1: one). SGE splits each
	// message over this many scatter/gather entries (--sge; 0, 1: one).
	Region int64  `json:"region_bytes,omitempty"`
	Access string `json:"access,omitempty"`
	Stride int64  `json:"stride_bytes,omitempty"`
	Seed   uint64 `json:"seed,omitempty"`
	MRs    int    `json:"mrs,omitempty"`
	SGE    int    `json:"sge,omitempty"`
	// IdleQPs connects this many more RC QPs on each side that carry
	// nothing: QP contexts beside the measured ones (--qps-idle).
	IdleQPs int `json:"idle_qps,omitempty"`
}

// MaxQPs bounds the measured QPs of one test (rdmabench cliffs searches up
// to it; the device's max_qp and the memory budget bound it further).
const MaxQPs = 1024

// NumQPs is the number of measured QPs (at least 1).
func (s Spec) NumQPs() int { return max(s.QPs, 1) }

// NumThreads is the number of client threads driving the QPs (at least 1).
func (s Spec) NumThreads() int { return max(s.Threads, 1) }

// QPTypeOrDefault is the spec's QP type, "rc" when unset.
func (s Spec) QPTypeOrDefault() string {
	if s.QPType == "" {
		return result.QPTypeRC
	}
	return s.QPType
}

// QPTypeLabel is the spec's QP type as results show it: "RC", "UC" or "UD"
// ("" for the TCP baseline).
func (s Spec) QPTypeLabel() string {
	if s.Transport == result.TransportTCP {
		return ""
	}
	return strings.ToUpper(s.QPTypeOrDefault())
}

// ReadsOrAtomics reports whether the test issues RDMA READs or atomics,
// which need responder resources on the peer.
func (s Spec) ReadsOrAtomics() bool { return s.Traits().ReadAtomic }

// Unreliable reports whether the spec runs on a QP type without
// acknowledgements (UC or UD): a lost message is not retransmitted.
func (s Spec) Unreliable() bool {
	t := s.QPTypeOrDefault()
	return t == result.QPTypeUC || t == result.QPTypeUD
}

// Load is the background traffic of a latency-under-load test: QPs queue
// pairs each streaming Op (write or read) messages of Size bytes.
type Load struct {
	QPs     int    `json:"qps"`
	Op      string `json:"op"`
	Size    int    `json:"size_bytes"`
	TxDepth int    `json:"tx_depth"`
	CQMod   int    `json:"cq_mod"`
	// The attackers of rdmabench isolation (attack.go): AltSize is the
	// message size of the odd-numbered load QPs (0: all Size); RNR lets Op
	// be send at a server that keeps one receive posted per load QP;
	// ChurnSize registers and deregisters a buffer of this many bytes in
	// a loop beside the load QPs (QPs may then be 0; Op and Size must
	// still be valid).
	// Threads drives the load QPs round robin from this many threads
	// (0: one thread per QP). MRs spreads the load QPs' operations round
	// robin over this many MRs on each side (0 or 1: one buffer each; the
	// MTT/MPT thrash, attack.go).
	AltSize   int  `json:"alt_size_bytes,omitempty"`
	RNR       bool `json:"rnr,omitempty"`
	ChurnSize int  `json:"churn_size_bytes,omitempty"`
	Threads   int  `json:"threads,omitempty"`
	MRs       int  `json:"mrs,omitempty"`
}

// isLoadOp reports whether op may stream as a load (OpTraits.Load).
func isLoadOp(op string) bool { t, ok := OpOf(op); return ok && t.Load }

// MaxLoadQPs bounds the load QPs of one test (--load-qps: one thread each).
const MaxLoadQPs = 64

// MaxThrashLoadQPs bounds the load QPs of one test when fewer threads
// drive them round robin (Load.Threads; qp-thrash at Husky's 16 processes
// x 32 QPs); the device's max_qp and the budget's --max-qps bound them
// further.
const MaxThrashLoadQPs = 512

func (l *Load) validate() error {
	if err := l.validateAttack(); err != nil {
		return err
	}
	switch {
	case l.ChurnSize > 0 && l.QPs == 0: // registration churn alone: Op and Size are checked all the same
	case l.QPs < 1 || l.QPs > MaxThrashLoadQPs || l.QPs > MaxLoadQPs && (l.Threads == 0 || l.Threads == l.QPs):
		return fmt.Errorf("load QPs %d out of range 1..%d (1..%d driven round robin from fewer threads)", l.QPs, MaxLoadQPs, MaxThrashLoadQPs)
	case !isLoadOp(l.Op) && !(l.RNR && l.Op == result.OpSend):
		return fmt.Errorf("load op %q invalid: %s (the server's CPU stays idle)", l.Op, orList(opNames(func(t OpTraits) bool { return t.Load })))
	case l.Size < 1 || l.Size > MaxSize:
		return fmt.Errorf("load size %d bytes out of range 1..%d", l.Size, MaxSize)
	case l.TxDepth < 1 || l.TxDepth > MaxDepth:
		return fmt.Errorf("load tx depth %d out of range 1..%d", l.TxDepth, MaxDepth)
	case l.CQMod < 1 || l.CQMod > l.TxDepth:
		return fmt.Errorf("load CQ moderation %d out of range 1..%d (the load tx depth)", l.CQMod, l.TxDepth)
	}
	return nil
}

// LoadSpec is the bandwidth spec of each load QP (with AltSize, the larger
// of both sizes: what each QP's buffer must hold; LoadSpecAt is QP i's).
func (s Spec) LoadSpec() Spec {
	return Spec{Op: s.Load.Op, Mode: result.ModeBW, Size: max(s.Load.Size, s.Load.AltSize), Iters: 1, TxDepth: s.Load.TxDepth, CQMod: s.Load.CQMod,
		RxDepth: 1, MTU: s.MTU, SL: s.SL, TClass: s.TClass, LimitMsgRate: s.LoadPace(),
		NoRelaxedOrdering: s.NoRelaxedOrdering, NoAddrStep: s.NoAddrStep, AddrCycle: s.AddrCycle,
		CompVector: s.CompVector, CompVectorSpread: s.CompVectorSpread, PKeyIndex: s.PKeyIndex, MRs: s.Load.MRs}
}

// Name is a short label, e.g. "send lat 2B" or "tcp send bw 64K".
func (s Spec) Name() string { return s.Key().String() }

// Key identifies the spec's test across runs (result.KeyOf of its result).
func (s Spec) Key() result.Key { return result.NewKey(s.Op, s.Mode, s.Size, s.Transport) }

// TimedInterval says in words what one latency sample of the spec is.
func (s Spec) TimedInterval() string {
	if s.Rate > 0 {
		return fmt.Sprintf("open loop at %g ops/s (%s schedule): from each operation's intended send time to its reply "+
			"(full round trip plus any wait behind the previous one; corrects coordinated omission)", s.Rate, s.ScheduleOrDefault())
	}
	if s.MRModeOrDefault() == result.MRModePerOp {
		return s.perOpInterval()
	}
	if s.Bidirectional {
		return BidirInterval
	}
	if s.Mode == result.ModeBW {
		return "bandwidth: first post to last completion; latency: post to completion of each signaled work request"
	}
	return s.Traits().Interval
}

// HalfRTT reports whether latency is reported as half the measured round trip.
func (s Spec) HalfRTT() bool {
	return s.Mode == result.ModeLat && s.Rate == 0 && s.Traits().PingPong
}

func (s Spec) ScheduleOrDefault() string {
	if s.Schedule == "" {
		return result.ScheduleConstant
	}
	return s.Schedule
}
