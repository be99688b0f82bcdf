package mr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"runtime"
	"time"

	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/internal/version"
	"github.com/rdmabench/rdmabench/verbs"
)

// DefaultSizes are the registration sizes of `rdmabench mr` without
// --sizes: 4K, 64K, 1M, 16M and 256M (1G only on request).
var DefaultSizes = []int{4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20}

// Defaults of Config.
const (
	DefaultIters       = 1000
	DefaultTimePerSize = 10 * time.Second
	DefaultMROpSize    = 4 << 10
	DefaultOpIters     = 10000
	// mrHeadroom is the memory left free when deciding whether a buffer fits
	// in MemAvailable.
	mrHeadroom = 128 << 20
	// mrOpBatch is the number of WRITEs per C call; the context is checked
	// between calls.
	mrOpBatch = 1000
)

// Config is one `rdmabench mr` run: the registration cost table over
// Sizes, then RDMA WRITEs of OpSize with pooled against per-operation
// registration. Zero values take the defaults above.
type Config struct {
	Device      string
	Port        int
	GIDIndex    int // -1: auto
	Sizes       []int
	Iters       int           // measured ibv_reg_mr/ibv_dereg_mr pairs per size
	TimePerSize time.Duration // a size stops early after this long (at least 2 pairs); < 0: no limit
	OpSize      int           // bytes per WRITE
	OpIters     int           // measured WRITEs per mode
	ODP         bool          // register with IBV_ACCESS_ON_DEMAND
	HugePages   bool          // buffers from 2 MiB huge pages (MAP_HUGETLB)
	Progress    io.Writer     // one line per step (nil: none)
	CommandLine []string
}

func (c *Config) defaults() error {
	if len(c.Sizes) == 0 {
		c.Sizes = DefaultSizes
	}
	if c.Iters == 0 {
		c.Iters = DefaultIters
	}
	if c.TimePerSize == 0 {
		c.TimePerSize = DefaultTimePerSize
	}
	if c.OpSize == 0 {
		c.OpSize = DefaultMROpSize
	}
	if c.OpIters == 0 {
		c.OpIters = DefaultOpIters
	}
	if c.Port == 0 {
		c.Port = 1
	}
	switch {
	case c.Iters < 1 || c.Iters > 1e6:
		return fmt.Errorf("iterations %d out of range 1..1000000", c.Iters)
	case c.OpIters < 1 || c.OpIters > 1e7:
		return fmt.Errorf("op iterations %d out of range 1..10000000", c.OpIters)
	case c.OpSize < 1 || c.OpSize > spec.MaxSize:
		return fmt.Errorf("op size %d bytes out of range 1..%d", c.OpSize, spec.MaxSize)
	}
	for _, s := range c.Sizes {
		if s < 1 || s > spec.MaxSize {
			return fmt.Errorf("size %d bytes out of range 1..%d", s, spec.MaxSize)
		}
	}
	return nil
}

const (
	timedPooled = "from before ibv_post_send to the polled completion (one MR registered once)"
	timedPerOp  = "from before ibv_reg_mr to after ibv_dereg_mr (register, post, completion, deregister)"
)

// mrSkipReason returns why a buffer of size bytes cannot be registered
// here, naming the limit, or "" when it can: the device's max_mr_size,
// RLIMIT_MEMLOCK (memlock is verbs.CheckMemlock's verdict), free huge pages
// with huge, else MemAvailable less mrHeadroom.
func mrSkipReason(size int, maxMR uint64, memlock error, m endpoint.Meminfo, huge bool) string {
	label := report.SizeLabel(int64(size))
	if maxMR > 0 && uint64(size) > maxMR {
		return fmt.Sprintf("%s skipped: above the device's max_mr_size of %d bytes", label, maxMR)
	}
	if memlock != nil {
		return fmt.Sprintf("%s skipped: %v", label, memlock)
	}
	if huge {
		page := m.HugePage()
		need := (int64(size) + page - 1) / page
		if need > m.HugePagesFree {
			return fmt.Sprintf("%s skipped: needs %d huge pages of %s, %d free (HugePages_Free; raise vm.nr_hugepages)",
				label, need, endpoint.FormatMiB(page), m.HugePagesFree)
		}
		return ""
	}
	if m.MemAvailable >= 0 && int64(size)+mrHeadroom > m.MemAvailable {
		return fmt.Sprintf("%s skipped: needs %s of memory plus %s to spare, MemAvailable is %s",
			label, endpoint.FormatMiB(int64(size)), endpoint.FormatMiB(mrHeadroom), endpoint.FormatMiB(m.MemAvailable))
	}
	return ""
}

// mrAccess is the access of every registration of the run.
func mrAccess(odp bool) verbs.Access {
	if odp {
		return verbs.AccessLocalWrite | verbs.AccessOnDemand
	}
	return verbs.AccessLocalWrite
}

// mrRun holds the resources of a run, closed in reverse order.
type mrRun struct {
	cfg     Config
	dev     *device.Device
	pd      *verbs.PD
	closers []interface{ Close() error }
}

func (r *mrRun) keep(c interface{ Close() error }) { r.closers = append(r.closers, c) }

func (r *mrRun) close() error {
	var errs []error
	for i := len(r.closers) - 1; i >= 0; i-- {
		errs = append(errs, r.closers[i].Close())
	}
	r.closers = nil
	return errors.Join(errs...)
}

func (r *mrRun) progress(format string, a ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "rdmabench: mr: "+format+"\n", a...)
	}
}

// Run runs `rdmabench mr` on one device: ibv_reg_mr/ibv_dereg_mr latency
// per buffer size, then one-at-a-time RDMA WRITEs from a pooled MR and with
// per-operation registration, to a passive QP on the same device. Sizes the
// memory, RLIMIT_MEMLOCK or the device cannot take are skipped with a note
// in MR.Skipped. With ODP on a device without it, Run fails with
// *verbs.NotSupportedError ("ODP not supported by rxe0"). On an error after
// measuring began, the document holds what was measured.
func Run(ctx context.Context, cfg Config) (_ *Document, err error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	mem := endpoint.ReadMeminfo()
	if cfg.HugePages {
		if err := mem.NoHugePages(); err != nil {
			return nil, err
		}
	}
	dev, err := device.Open(cfg.Device, cfg.Port, cfg.GIDIndex, netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		return nil, err
	}
	r := &mrRun{cfg: cfg, dev: dev}
	r.keep(dev)
	defer func() {
		if cerr := r.close(); err == nil {
			err = cerr
		}
	}()
	caps, err := dev.Ctx.ODPCaps()
	if err != nil {
		return nil, err
	}
	if cfg.ODP {
		if err := dev.Ctx.CheckODP(verbs.ODPWrite); err != nil {
			return nil, err
		}
	}
	env, warns, err := device.CollectEnv(dev.Ctx, dev.Port.Port)
	if err != nil {
		return nil, err
	}
	env.GIDIndex, env.GIDType, env.GID, env.GIDReason = dev.GID.Index, dev.GID.Type.String(), dev.GID.GID.String(), dev.GIDReason
	env.DeviceReason = dev.Reason
	env.PathMTU = dev.Port.ActiveMTU
	checks, cw := hostenv.CheckEnv(env.Device, -1)
	env.Checks = checks
	doc := &Document{
		Document: result.Document{SchemaVersion: result.SchemaVersion, Tool: "rdmabench", ToolVersion: version.String(), CommandLine: cfg.CommandLine,
			Start: time.Now(), Role: "mr", Env: env, Results: []result.Result{}, Warnings: append(warns, cw...)},
		MR: Report{Access: mrAccess(cfg.ODP).String(), ODP: cfg.ODP, HugePages: cfg.HugePages, ODPCaps: caps,
			Iterations: cfg.Iters, TimePerSizeNS: max(cfg.TimePerSize.Nanoseconds(), -1), Registration: []RegResult{}},
	}
	defer func() {
		doc.End = time.Now()
		var ru unix.Rusage
		if unix.Getrusage(unix.RUSAGE_SELF, &ru) == nil {
			doc.PeakRSSBytes = ru.Maxrss * 1024
		}
	}()
	if r.pd, err = dev.Ctx.AllocPD(); err != nil {
		return doc, err
	}
	r.keep(r.pd)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := r.registration(ctx, doc); err != nil {
		return doc, err
	}
	if err := ctx.Err(); err != nil {
		return doc, err
	}
	ops, err := r.ops(ctx)
	if ops != nil {
		doc.MR.Ops = ops
	}
	return doc, err
}

// registration fills doc.MR.Registration and doc.MR.Skipped.
func (r *mrRun) registration(ctx context.Context, doc *Document) error {
	cfg := r.cfg
	access := mrAccess(cfg.ODP)
	for _, size := range cfg.Sizes {
		if err := ctx.Err(); err != nil {
			return err
		}
		reason := mrSkipReason(size, r.dev.Attr.MaxMRSize, verbs.CheckMemlock(uint64(size)), endpoint.ReadMeminfo(), cfg.HugePages)
		var buf *verbs.Buffer
		if reason == "" {
			var err error
			if buf, err = verbs.AllocBuffer(size, cfg.HugePages); err != nil {
				reason = fmt.Sprintf("%s skipped: cannot allocate the buffer: %v", report.SizeLabel(int64(size)), err)
			}
		}
		if reason != "" {
			r.progress("%s", reason)
			doc.MR.Skipped = append(doc.MR.Skipped, SkippedSize{SizeBytes: size, Reason: reason})
			continue
		}
		r.progress("ibv_reg_mr/ibv_dereg_mr of %s: %d iterations (%s)", report.SizeLabel(int64(size)), cfg.Iters, timeLimit(cfg.TimePerSize.Nanoseconds()))
		res, err := regOneSize(r.pd, buf, size, access, cfg.Iters, cfg.TimePerSize)
		if cerr := buf.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("register %s: %w", report.SizeLabel(int64(size)), err)
		}
		doc.MR.Registration = append(doc.MR.Registration, res)
	}
	return nil
}

// regOneSize times one size after one warm-up pair (the first registration
// of a fresh buffer pays one-off costs).
func regOneSize(pd *verbs.PD, buf *verbs.Buffer, size int, access verbs.Access, iters int, budget time.Duration) (RegResult, error) {
	if _, _, err := pd.RegBench(buf, size, access, 1, 0); err != nil {
		return RegResult{}, err
	}
	reg, dereg, err := pd.RegBench(buf, size, access, iters, max(budget, 0))
	if err != nil {
		return RegResult{}, err
	}
	return newRegResult(size, reg, dereg), nil
}

// ops builds a connected pair of RC QPs on the device (the peer passive,
// its buffer REMOTE_WRITE) and measures both registration modes.
func (r *mrRun) ops(ctx context.Context) (*Ops, error) {
	cfg, d := r.cfg, r.dev
	if cfg.HugePages {
		if err := endpoint.ReadMeminfo().NoHugePages(); err != nil {
			return nil, err
		}
	}
	if cfg.OpSize > int(d.Port.MaxMsgSize) && d.Port.MaxMsgSize != 0 {
		return nil, fmt.Errorf("op size %d bytes exceeds %s port %d max_msg_sz %d", cfg.OpSize, d.Ctx.Name(), d.Port.Port, d.Port.MaxMsgSize)
	}
	if err := verbs.CheckMemlock(2 * uint64(cfg.OpSize)); err != nil {
		return nil, fmt.Errorf("op buffers of %d bytes: %w", cfg.OpSize, err)
	}
	r.progress("RDMA WRITE of %s, pooled MR and per-operation registration: %d operations each", report.SizeLabel(int64(cfg.OpSize)), cfg.OpIters)
	var qps [2]*verbs.QP
	for i := range qps {
		cq, err := d.Ctx.CreateCQ(16, false)
		if err != nil {
			return nil, err
		}
		r.keep(cq)
		if qps[i], err = r.pd.CreateQP(verbs.QPConfig{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq,
			Caps: verbs.QPCaps{MaxSendWR: 4, MaxRecvWR: 1}}); err != nil {
			return nil, err
		}
		r.keep(qps[i])
	}
	src, err := verbs.AllocBuffer(cfg.OpSize, cfg.HugePages)
	if err != nil {
		return nil, err
	}
	r.keep(src)
	dst, err := verbs.AllocBuffer(cfg.OpSize, false)
	if err != nil {
		return nil, err
	}
	r.keep(dst)
	dmr, err := r.pd.RegisterMR(dst, 0, cfg.OpSize, verbs.AccessLocalWrite|verbs.AccessRemoteWrite)
	if err != nil {
		return nil, err
	}
	r.keep(dmr)
	if err := r.connect(qps[0], qps[1], 0); err != nil {
		return nil, err
	}
	if err := r.connect(qps[1], qps[0], verbs.AccessRemoteWrite); err != nil {
		return nil, err
	}
	warm := min(max(cfg.OpIters/100, 10), 1000)
	out := &Ops{Op: result.OpWrite, SizeBytes: cfg.OpSize, Iterations: cfg.OpIters, Warmup: warm}
	for _, perOp := range []bool{false, true} {
		l, err := verbs.NewMROpLoop(verbs.MROpConfig{QP: qps[0], Buf: src, PerOp: perOp, Access: mrAccess(cfg.ODP), Size: cfg.OpSize,
			RemoteAddr: dmr.Addr(), RKey: dmr.RKey(), Timeout: endpoint.EngineTimeout, Samples: max(cfg.OpIters, warm)})
		if err != nil {
			return nil, err
		}
		res, err := runMROps(ctx, l, cfg.OpSize, warm, cfg.OpIters)
		if cerr := l.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("%s RDMA WRITE: %w", l.Mode(), err)
		}
		if perOp {
			out.PerOp = res
		} else {
			out.Pooled = res
		}
	}
	if out.PerOp.OpsPerSec > 0 {
		out.Ratio = out.Pooled.OpsPerSec / out.PerOp.OpsPerSec
	}
	return out, nil
}

// connect moves qp to RTS towards the QP peer on the same device and port.
func (r *mrRun) connect(qp, peer *verbs.QP, access verbs.Access) error {
	d := r.dev
	if err := qp.ToInit(d.Port.Port, access); err != nil {
		return err
	}
	if err := qp.ToRTR(verbs.RTRAttr{Port: d.Port.Port, PathMTU: d.Port.ActiveMTU, DestQPN: peer.QPN(), RQPSN: 0x100,
		DLID: d.Port.LID, UseGRH: d.Port.LinkLayer == "Ethernet" || !d.GID.GID.IsZero(), DGID: d.GID.GID,
		SGIDIndex: d.GID.Index, MaxDestRdAtomic: 1}); err != nil {
		return err
	}
	return qp.ToRTS(verbs.RTSAttr{SQPSN: 0x100, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1})
}

// runMROps runs warm unmeasured operations of size bytes, then n measured
// ones in batches, checking ctx between batches.
func runMROps(ctx context.Context, l *verbs.MROpLoop, size, warm, n int) (OpResult, error) {
	res := OpResult{Mode: l.Mode(), TimedInterval: timedPooled}
	if l.Mode() == "per-op" {
		res.TimedInterval = timedPerOp
	}
	if err := l.Run(warm); err != nil {
		return res, err
	}
	l.Reset()
	for done := 0; done < n; {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		k := min(mrOpBatch, n-done)
		if err := l.Run(k); err != nil {
			return res, err
		}
		done += k
	}
	h := hist.New()
	h.RecordSlice(l.Samples(), 0)
	first, last := l.Span()
	res.Latency = result.NewLatency(h, 1)
	res.DurationNS = last - first
	if res.DurationNS > 0 {
		res.OpsPerSec = float64(n) / (float64(res.DurationNS) / 1e9)
	}
	res.Bandwidth = result.NewBandwidth(size, int64(n), res.DurationNS)
	return res, nil
}
