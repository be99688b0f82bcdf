package bench

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Limits on test parameters.
const (
	MaxSize      = 1 << 30 // bytes per message
	MaxDepth     = 1 << 15 // tx/rx depth
	MaxIters     = 1 << 40
	MaxDuration  = 24 * time.Hour
	AtomicSize   = 8
	DefaultPort  = 18515 // TCP control port (perftest's)
	MaxInline    = 1 << 16
	MaxRate      = 1e8 // operations per second
	MaxPostList  = 64  // work requests chained per post (verbs.MaxPostList)
	defaultIters = 10000
	largeMessage = 8 << 10 // above this, bandwidth tests signal every send by default
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
	Inline     int           `json:"inline_bytes"`
	MTU        int           `json:"mtu,omitempty"` // requested path MTU, bytes; 0 = the ports' active MTU
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
}

// MaxQPs bounds the measured QPs of one test.
const MaxQPs = 64

// NumQPs is the number of measured QPs (at least 1).
func (s Spec) NumQPs() int { return max(s.QPs, 1) }

// NumThreads is the number of client threads driving the QPs (at least 1).
func (s Spec) NumThreads() int { return max(s.Threads, 1) }

// qpType is the spec's QP type, "rc" when unset.
func (s Spec) qpType() string {
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
	return strings.ToUpper(s.qpType())
}

// Unreliable reports whether the spec runs on a QP type without
// acknowledgements (UC or UD): a lost message is not retransmitted.
func (s Spec) Unreliable() bool { t := s.qpType(); return t == result.QPTypeUC || t == result.QPTypeUD }

// Load is the background traffic of a latency-under-load test: QPs queue
// pairs each streaming Op (write or read) messages of Size bytes.
type Load struct {
	QPs     int    `json:"qps"`
	Op      string `json:"op"`
	Size    int    `json:"size_bytes"`
	TxDepth int    `json:"tx_depth"`
	CQMod   int    `json:"cq_mod"`
}

// MaxLoadQPs bounds the load QPs of one test.
const MaxLoadQPs = 64

func (l *Load) validate() error {
	switch {
	case l.QPs < 1 || l.QPs > MaxLoadQPs:
		return fmt.Errorf("load QPs %d out of range 1..%d", l.QPs, MaxLoadQPs)
	case l.Op != result.OpWrite && l.Op != result.OpRead:
		return fmt.Errorf("load op %q invalid: write or read (the server's CPU stays idle)", l.Op)
	case l.Size < 1 || l.Size > MaxSize:
		return fmt.Errorf("load size %d bytes out of range 1..%d", l.Size, MaxSize)
	case l.TxDepth < 1 || l.TxDepth > MaxDepth:
		return fmt.Errorf("load tx depth %d out of range 1..%d", l.TxDepth, MaxDepth)
	case l.CQMod < 1 || l.CQMod > l.TxDepth:
		return fmt.Errorf("load CQ moderation %d out of range 1..%d (the load tx depth)", l.CQMod, l.TxDepth)
	}
	return nil
}

// loadSpec is the bandwidth spec of each load QP.
func (s Spec) loadSpec() Spec {
	return Spec{Op: s.Load.Op, Mode: result.ModeBW, Size: s.Load.Size, Iters: 1, TxDepth: s.Load.TxDepth, CQMod: s.Load.CQMod,
		RxDepth: 1, MTU: s.MTU, SL: s.SL, TClass: s.TClass}
}

// Name is a short label, e.g. "send lat 2B".
func (s Spec) Name() string { return fmt.Sprintf("%s %s %dB", s.Op, s.Mode, s.Size) }

// Validate checks a spec, naming the bad value and the limit. The server
// runs it on every spec it receives.
func (s Spec) Validate() error {
	if !contains(result.Ops, s.Op) {
		return fmt.Errorf("op %q unknown; valid: %s", s.Op, strings.Join(result.Ops, ", "))
	}
	if !contains(result.Modes, s.Mode) {
		return fmt.Errorf("mode %q unknown; valid: %s", s.Mode, strings.Join(result.Modes, ", "))
	}
	if s.Size < 1 || s.Size > MaxSize {
		return fmt.Errorf("size %d bytes out of range 1..%d", s.Size, MaxSize)
	}
	if (s.Op == result.OpFetchAdd || s.Op == result.OpCmpSwap) && s.Size != AtomicSize {
		return fmt.Errorf("size %d bytes invalid for %s: atomics are %d bytes", s.Size, s.Op, AtomicSize)
	}
	if s.Iters < 0 || s.Iters > MaxIters {
		return fmt.Errorf("iterations %d out of range 1..%d", s.Iters, int64(MaxIters))
	}
	if s.Duration < 0 || s.Duration > MaxDuration {
		return fmt.Errorf("duration %v out of range (0, %v]", s.Duration, MaxDuration)
	}
	if (s.Iters == 0) == (s.Duration == 0) {
		return fmt.Errorf("exactly one of iterations (%d) and duration (%v) must be set", s.Iters, s.Duration)
	}
	if s.WarmupTime < 0 || s.WarmupTime > MaxDuration {
		return fmt.Errorf("warm-up time %v out of range [0, %v]", s.WarmupTime, MaxDuration)
	}
	if s.Warmup < 0 || s.Warmup > MaxIters {
		return fmt.Errorf("warm-up %d iterations out of range 0..%d", s.Warmup, int64(MaxIters))
	}
	if s.TxDepth < 1 || s.TxDepth > MaxDepth {
		return fmt.Errorf("tx depth %d out of range 1..%d", s.TxDepth, MaxDepth)
	}
	if s.RxDepth < 1 || s.RxDepth > MaxDepth {
		return fmt.Errorf("rx depth %d out of range 1..%d", s.RxDepth, MaxDepth)
	}
	if s.CQMod < 1 || s.CQMod > s.TxDepth {
		return fmt.Errorf("CQ moderation %d out of range 1..%d (the tx depth)", s.CQMod, s.TxDepth)
	}
	if s.Inline < 0 || s.Inline > MaxInline {
		return fmt.Errorf("inline size %d bytes out of range 0..%d", s.Inline, MaxInline)
	}
	if s.Transport != "" && s.Transport != result.TransportRDMA && s.Transport != result.TransportTCP {
		return fmt.Errorf("transport %q unknown; valid: rdma, tcp", s.Transport)
	}
	if s.Transport == result.TransportTCP && s.Op != result.OpSend {
		return fmt.Errorf("op %s has no TCP equivalent: the TCP baseline runs send (ping-pong and streaming)", s.Op)
	}
	if s.Rate < 0 || s.Rate > MaxRate {
		return fmt.Errorf("rate %g ops/s out of range (0, %g]", s.Rate, float64(MaxRate))
	}
	if s.Rate > 0 && s.Mode != result.ModeLat {
		return fmt.Errorf("rate applies to latency tests (open loop), not to mode %s", s.Mode)
	}
	if s.Schedule != "" && s.Schedule != result.ScheduleConstant && s.Schedule != result.SchedulePoisson {
		return fmt.Errorf("schedule %q unknown; valid: constant, poisson", s.Schedule)
	}
	if s.SL < 0 || s.SL > 15 {
		return fmt.Errorf("service level %d out of range 0..15", s.SL)
	}
	if s.TClass < 0 || s.TClass > 255 {
		return fmt.Errorf("traffic class %d out of range 0..255", s.TClass)
	}
	if s.PostList < 0 || s.PostList > MaxPostList || (s.PostList > 1 && s.PostList > s.TxDepth) {
		return fmt.Errorf("post list %d out of range 0..%d (and at most the tx depth %d)", s.PostList, MaxPostList, s.TxDepth)
	}
	if s.Event && s.Op == result.OpWrite && s.Mode == result.ModeLat {
		return fmt.Errorf("event mode needs a completion per message, and WRITE latency detects arrival by polling memory (perftest offers no -e for WRITE either): use send or read")
	}
	if s.Event && s.Transport == result.TransportTCP {
		return fmt.Errorf("event mode applies to RDMA completion queues, not to the TCP baseline")
	}
	if s.Load != nil {
		if s.Mode != result.ModeLat || s.Transport == result.TransportTCP {
			return fmt.Errorf("load applies to RDMA latency tests, not to %s %s", s.Transport, s.Mode)
		}
		if err := s.Load.validate(); err != nil {
			return err
		}
	}
	if !contains(result.QPTypes, s.qpType()) {
		return fmt.Errorf("QP type %q unknown; valid: %s", s.QPType, strings.Join(result.QPTypes, ", "))
	}
	if s.QPType != "" && s.QPType != result.QPTypeRC && s.Transport == result.TransportTCP {
		return fmt.Errorf("QP type %s applies to RDMA tests, not to the TCP baseline", s.QPType)
	}
	switch s.qpType() {
	case result.QPTypeUC:
		if s.Op != result.OpSend && s.Op != result.OpWrite {
			return fmt.Errorf("op %s is not supported on UC QPs: UC carries send and write only (READ and atomics need RC)", s.Op)
		}
	case result.QPTypeUD:
		if s.Op != result.OpSend {
			return fmt.Errorf("op %s is not supported on UD QPs: UD carries send only (at most the path MTU per message)", s.Op)
		}
		if s.MTU != 0 && s.Size > s.MTU {
			return fmt.Errorf("size %d bytes exceeds the path MTU %d bytes: a UD message is one packet (use a size of at most %d, or --qp-type rc/uc)", s.Size, s.MTU, s.MTU)
		}
	}
	if s.QPs < 0 || s.QPs > MaxQPs {
		return fmt.Errorf("QPs %d out of range 1..%d (--qps)", s.QPs, MaxQPs)
	}
	if s.Threads < 0 || s.Threads > s.NumQPs() {
		return fmt.Errorf("threads %d out of range 1..%d (--threads: at most --qps)", s.Threads, s.NumQPs())
	}
	if s.NumQPs() > 1 {
		switch {
		case s.Mode == result.ModeLat:
			return fmt.Errorf("--qps %d applies to bandwidth tests: latency runs on one QP (use --mode bw, or --load-qps for latency under load)", s.QPs)
		case s.Transport == result.TransportTCP:
			return fmt.Errorf("--qps %d applies to RDMA tests, not to the TCP baseline", s.QPs)
		case s.Event:
			return fmt.Errorf("--event with --qps %d is not supported: a thread drives its QPs round robin by polling", s.QPs)
		case s.Iters > 0 && s.Iters < int64(s.NumQPs()):
			return fmt.Errorf("iterations %d fewer than --qps %d: iterations are the total over all QPs", s.Iters, s.QPs)
		}
	}
	if s.MTU != 0 && (s.MTU < 256 || s.MTU > 4096 || bits.OnesCount(uint(s.MTU)) != 1) {
		return fmt.Errorf("MTU %d invalid: use 256, 512, 1024, 2048 or 4096", s.MTU)
	}
	if s.RDMACM {
		switch {
		case s.Transport == result.TransportTCP:
			return fmt.Errorf("--rdma-cm applies to RDMA tests, not to the TCP baseline")
		case s.qpType() != result.QPTypeRC:
			return fmt.Errorf("--rdma-cm connects RC QPs only, not --qp-type %s", s.QPType)
		case s.MTU != 0:
			return fmt.Errorf("--mtu %d with --rdma-cm: rdma_cm sets the path MTU from both ports (lower the netdev MTU instead)", s.MTU)
		case s.SL != 0:
			return fmt.Errorf("--sl %d with --rdma-cm: rdma_cm derives the service level from the route (use --tclass for the ToS)", s.SL)
		}
	}
	return s.validateMR()
}

// TimedInterval says in words what one latency sample of the spec is.
func (s Spec) TimedInterval() string {
	if s.Rate > 0 {
		return fmt.Sprintf("open loop at %g ops/s (%s schedule): from each operation's intended send time to its reply "+
			"(full round trip plus any wait behind the previous one; corrects coordinated omission)", s.Rate, s.schedule())
	}
	if s.mrMode() == result.MRModePerOp {
		return s.perOpInterval()
	}
	if s.Mode == result.ModeBW {
		return "bandwidth: first post to last completion; latency: post to completion of each signaled work request"
	}
	switch s.Op {
	case result.OpSend:
		return "half of a SEND/RECV ping-pong round trip (RTT/2), from post to the reply's receive completion"
	case result.OpWrite:
		return "half of an RDMA WRITE ping-pong round trip (RTT/2), from post until the reply's last byte lands in memory"
	case result.OpRead:
		return "one full RDMA READ round trip (RTT), from post to its completion"
	default:
		return "one full atomic round trip (RTT), from post to its completion"
	}
}

// HalfRTT reports whether latency is reported as half the measured round trip.
func (s Spec) HalfRTT() bool {
	return s.Mode == result.ModeLat && s.Rate == 0 && (s.Op == result.OpSend || s.Op == result.OpWrite)
}

func (s Spec) schedule() string {
	if s.Schedule == "" {
		return result.ScheduleConstant
	}
	return s.Schedule
}

// ParseSize parses a byte count with an optional K, M or G suffix (binary:
// 4K = 4096).
func ParseSize(s string) (int, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "B"), "i")
	mult := 1
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult, t = 1<<10, t[:n-1]
		case 'm', 'M':
			mult, t = 1<<20, t[:n-1]
		case 'g', 'G':
			mult, t = 1<<30, t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 1 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes, e.g. 64, 4K, 1M", s)
	}
	if v > MaxSize/int64(mult) {
		return 0, fmt.Errorf("size %q exceeds the limit of %d bytes (1G)", s, MaxSize)
	}
	return int(v) * mult, nil
}

// ParseSizes parses a comma-separated list of sizes and power-of-two ranges:
// "2,64,4K,1M" or "2-8M" (2, 4, 8, ... 8M). Duplicates are removed, order is
// kept.
func ParseSizes(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	add := func(v int) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("size list %q has an empty entry", s)
		}
		if lo, hi, ok := strings.Cut(part, "-"); ok {
			a, err := ParseSize(lo)
			if err != nil {
				return nil, err
			}
			b, err := ParseSize(hi)
			if err != nil {
				return nil, err
			}
			if a > b {
				return nil, fmt.Errorf("size range %q: %d is above %d", part, a, b)
			}
			if bits.OnesCount(uint(a)) != 1 {
				return nil, fmt.Errorf("size range %q: start %d is not a power of two", part, a)
			}
			for v := a; v <= b; v *= 2 {
				add(v)
			}
			continue
		}
		v, err := ParseSize(part)
		if err != nil {
			return nil, err
		}
		add(v)
	}
	return out, nil
}

// ParseCPUs parses a CPU list such as "2", "0,2" or "0-3,6" and checks
// each CPU against the count online (n).
func ParseCPUs(s string, n int) ([]int, error) {
	cpus, ok := parseCPUList(s)
	if !ok || len(cpus) == 0 {
		return nil, fmt.Errorf("CPU list %q: want CPU numbers such as 2, 0,2 or 0-3", s)
	}
	for _, c := range cpus {
		if c < 0 || c >= n {
			return nil, fmt.Errorf("CPU %d out of range 0..%d", c, n-1)
		}
	}
	return cpus, nil
}

// ParseList parses a comma-separated list whose entries must be in valid.
// "all" stands for every valid entry.
func ParseList(what, s string, valid []string) ([]string, error) {
	if strings.TrimSpace(s) == "all" {
		return append([]string(nil), valid...), nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if !contains(valid, p) {
			return nil, fmt.Errorf("%s %q unknown; valid: %s", what, p, strings.Join(valid, ", "))
		}
		if !contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Plan is what the client's flags ask for: the cross product of modes, ops
// and sizes. Zero fields take the defaults below.
type Plan struct {
	Ops        []string
	Modes      []string
	Sizes      []int         // nil: 2 B for latency, 64 KiB for bandwidth (perftest's defaults)
	Iters      int64         // 0: 10000 for latency, 5000 for bandwidth (unless Duration)
	Duration   time.Duration // per test
	Warmup     int64         // -1: the default (1% of iterations, at least 100 for latency; tx depth for bandwidth)
	WarmupTime time.Duration // warm up for this long instead (overrides Warmup)
	TxDepth    int           // bandwidth; 0: 128
	CQMod      int           // 0: min(100, tx depth)
	RxDepth    int           // 0: 512
	Inline     int
	MTU        int
	Transport  string  // "" or "rdma", or "tcp" for the kernel TCP baseline
	Rate       float64 // open-loop latency at this many ops/s on Schedule
	Schedule   string  // "constant" (default) or "poisson"
	Load       *Load   // latency tests: background bandwidth QPs
	PostList   int     // bandwidth: work requests per post
	SL         int     // service level, 0..15
	TClass     int     // GRH traffic class, 0..255
	Event      bool    // wait on completion channels instead of busy polling
	QPType     string  // "" or "rc", "uc", "ud"
	QPs        int     // bandwidth: measured QPs (0: 1)
	Threads    int     // bandwidth: client threads driving them (0: 1)
	MRMode     string  // "" or "pool", "per-op", "odp"
	HugePages  bool    // data path buffers from huge pages
	RDMACM     bool    // connect the QPs with rdma_cm
}

// Specs expands the plan into tests, in mode, op, size order. Atomics run at
// 8 bytes whatever the size list says. Every spec is validated.
func (p Plan) Specs() ([]Spec, error) {
	ops, modes := p.Ops, p.Modes
	if len(ops) == 0 {
		switch p.QPType {
		case result.QPTypeUC:
			ops = []string{result.OpSend, result.OpWrite}
		case result.QPTypeUD:
			ops = []string{result.OpSend}
		default:
			ops = []string{result.OpSend, result.OpWrite, result.OpRead}
		}
	}
	if len(modes) == 0 {
		modes = []string{result.ModeLat, result.ModeBW}
	}
	if p.Iters != 0 && p.Duration != 0 {
		return nil, fmt.Errorf("give either iterations (%d) or a duration (%v), not both", p.Iters, p.Duration)
	}
	explicitModes := len(p.Modes) > 0
	var out []Spec
	for _, m := range modes {
		for _, op := range ops {
			sizes := p.Sizes
			if sizes == nil {
				sizes = []int{2}
				if m == result.ModeBW {
					sizes = []int{65536}
				}
			}
			if op == result.OpFetchAdd || op == result.OpCmpSwap {
				sizes = []int{AtomicSize}
			}
			for _, sz := range sizes {
				s := Spec{Op: op, Mode: m, Size: sz, Iters: p.Iters, Duration: p.Duration, Warmup: p.Warmup, WarmupTime: p.WarmupTime,
					TxDepth: 1, CQMod: 1, RxDepth: p.RxDepth, Inline: p.Inline, MTU: p.MTU, Transport: p.Transport,
					Event: p.Event, QPType: p.QPType, SL: p.SL, TClass: p.TClass, MRMode: p.MRMode, HugePages: p.HugePages, RDMACM: p.RDMACM}
				if m == result.ModeLat {
					s.Rate, s.Schedule, s.Load = p.Rate, p.Schedule, p.Load
					if explicitModes { // refused by Validate when above 1
						s.QPs, s.Threads = p.QPs, p.Threads
					}
				}
				if s.Duration == 0 && s.Iters == 0 {
					s.Iters = defaultIters
					if m == result.ModeBW {
						s.Iters = 5000
					}
				}
				if m == result.ModeBW {
					s.TxDepth = p.TxDepth
					if s.TxDepth == 0 {
						s.TxDepth = 128
					}
					s.PostList = p.PostList
					s.QPs, s.Threads = p.QPs, p.Threads
					s.CQMod = p.CQMod
					if s.CQMod == 0 {
						s.CQMod = min(100, s.TxDepth)
						if s.Size > largeMessage {
							s.CQMod = 1 // as perftest: every large message is signaled
						}
					}
				}
				if s.RxDepth == 0 {
					s.RxDepth = 512
				}
				if s.WarmupTime > 0 {
					s.Warmup = 0
				} else if s.Warmup < 0 {
					s.Warmup = defaultWarmup(s)
				}
				if err := s.Validate(); err != nil {
					return nil, fmt.Errorf("%s: %w", s.Name(), err)
				}
				out = append(out, s)
			}
		}
	}
	return out, nil
}

func defaultWarmup(s Spec) int64 {
	if s.Mode == result.ModeBW {
		return int64(s.TxDepth)
	}
	w := s.Iters / 100
	return max(w, 100)
}
