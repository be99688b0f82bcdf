package endpoint

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/internal/testhook"
	"github.com/rdmabench/rdmabench/verbs"
)

// Endpoint is one side of one test: fresh CQs, QP and engine, and a buffer
// of the test's pool (Memory), in the pool's PD.
type Endpoint struct {
	Dev    *device.Device
	Spec   spec.Spec
	client bool
	pd     *verbs.PD // the pool's (not owned)
	scq    *verbs.CQ
	rcq    *verbs.CQ
	MR     *verbs.PoolBuf // registered memory: source at 0, target/receive area at area
	OpBuf  *verbs.Buffer  // per-op client: unregistered memory each operation registers
	QP     *verbs.QP
	ah     *verbs.AH // UD: the address handle of the peer
	QKey   uint32    // UD: this QP's Q_Key
	Eng    *verbs.Engine
	Area   int // offset of the target area in the buffer
	psn    uint32
	access verbs.Access
	CMID   *verbs.CMID // rdma_cm: the id the QP belongs to
	// setupStart is when this QP's creation began and setup how long it took
	// to reach RTS from there (connection setup time).
	setupStart time.Time
	setup      time.Duration
	// Inline is the QP's inline size, bytes, and inlineWhy the reason
	// (device.Device.InlineFor); a message is sent inline when it fits.
	Inline    int
	InlineWhy string
	// RdDepth is the READ/atomic initiator depth the QP got (max_rd_atomic).
	RdDepth int
	// srq is the side's shared receive queue (--srq; not owned), or nil;
	// recvs is how many receives the engine posts before traffic (SEND).
	srq   *verbs.SRQ
	recvs int
	// grh: the QP's address vector carries a GRH (useGRH; rdma_cm: RoCE).
	grh bool
	// peerRecvStep is the step of the peer's receives, as the peer gave it
	// (proto.QPInfo.RecvStep; 0 when it did not say).
	peerRecvStep int
	// spread is where the engine's work requests land in a spread test's
	// peer region (bench/spread; the initiator's measured QPs), or nil.
	spread *verbs.Spread
	// Idle: an idle QP (--qps-idle): connected to RTS, no engine.
	Idle bool
}

// sampleCap is the C sample buffer size per engine, entries (8 bytes
// each; a power of two, for the bandwidth sender's ring).
const sampleCap = 1 << 16

// SampleCap is the C sample buffer size per engine, entries: sampleCap,
// or testhook.SampleCap where a test set one (to cross a buffer boundary
// in few operations).
func SampleCap() int {
	if c := testhook.SampleCap; c > 0 {
		return c
	}
	return sampleCap
}

// RemoteAccess is what the peer may do to this side's memory: only what the
// test needs (least privilege).
// On iWARP the sink of a READ must be remotely writable too: iWARP carries
// READ responses as writes into it.
//
// In a bidirectional test (-b) each side is both initiator and target of the
// operation, so each gets what either side needs of a one-way test.
func RemoteAccess(s spec.Spec, client, iwarp bool) verbs.Access {
	if s.Bidirectional {
		s.Bidirectional = false
		return RemoteAccess(s, false, iwarp) | RemoteAccess(s, true, iwarp)
	}
	t := s.Traits()
	switch {
	case !client || (s.Mode == result.ModeLat && t.PingPong): // the target; a ping-pong's client is one too
		return accessVerbs[t.Access]
	case iwarp && t.Access == spec.AccessRemoteRead: // the READ's sink
		return verbs.AccessRemoteWrite
	}
	return 0
}

// newEndpoint creates the resources of one side of spec, with its buffer
// from pool and, when srq is not nil, its receives from srq. Call close on
// it.
func newEndpoint(dev *device.Device, s spec.Spec, client bool, pool *verbs.Pool, srq *verbs.SRQ) (_ *Endpoint, err error) {
	e := &Endpoint{Dev: dev, Spec: s, client: client, access: RemoteAccess(s, client, dev.Ctx.IsIWARP()), srq: srq, recvs: recvPosts(s)}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	if err := Supports(dev, s); err != nil {
		return nil, err
	}
	if err := checkChoices(dev, s); err != nil {
		return nil, err
	}
	if e.Inline, e.InlineWhy, err = dev.InlineFor(s); err != nil {
		return nil, err
	}
	qpType, err := device.QPType(s)
	if err != nil {
		return nil, err
	}
	if qpType == verbs.QPTypeUD {
		mtu := dev.Port.ActiveMTU
		if s.MTU != 0 {
			mtu = min(mtu, s.MTU)
		}
		if err := checkUDSize(s.Size, mtu); err != nil {
			return nil, err
		}
	}
	e.pd = pool.PD()
	if e.scq, err = dev.Ctx.CreateCQVector(s.TxDepth+cqSlack, s.Event, compVector(dev, s)); err != nil {
		return nil, err
	}
	if e.rcq, err = dev.Ctx.CreateCQVector(s.RxDepth+cqSlack, s.Event, compVector(dev, s)); err != nil {
		return nil, err
	}
	e.Area = endpointArea(s)
	if e.MR, err = pool.Get(); err != nil { // registered once per test, for every QP of it
		return nil, err
	}
	if client && s.MRModeOrDefault() == result.MRModePerOp {
		if e.OpBuf, err = verbs.AllocBuffer(2*e.Area, s.HugePages); err != nil {
			return nil, err
		}
	}
	if !s.RDMACM { // rdma_cm creates the QP on its id (createQP) when it connects
		e.setupStart = time.Now()
		if err := e.createQP(nil); err != nil {
			return nil, err
		}
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	e.psn = binary.BigEndian.Uint32(b[:]) & 0xffffff
	if qpType == verbs.QPTypeUD {
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		// the high bit marks a controlled Q_Key, which a send cannot use
		e.QKey = max(binary.BigEndian.Uint32(b[:])&0x7fffffff, 1)
	}
	return e, nil
}

// createQP creates the QP: with ibv_create_qp, or with rdma_create_qp on id.
// It fails when the device grants less inline data than requested.
func (e *Endpoint) createQP(id *verbs.CMID) error {
	s := e.Spec
	qpType, err := device.QPType(s)
	if err != nil {
		return err
	}
	cfg := verbs.QPConfig{Type: qpType, SendCQ: e.scq, RecvCQ: e.rcq, SRQ: e.srq,
		Caps: verbs.QPCaps{MaxSendWR: s.TxDepth, MaxRecvWR: s.RxDepth, MaxSendSGE: s.NumSGE(), MaxInlineData: e.Inline}}
	if e.srq != nil {
		cfg.Caps.MaxRecvWR = 0 // its receives come from the SRQ
	}
	if id == nil {
		e.QP, err = e.pd.CreateQP(cfg)
	} else {
		e.QP, err = id.CreateQP(e.pd, cfg)
		// rdma_cm builds the address vector: a GRH on RoCE, none within
		// an IB subnet (its path's hop limit is 0), none on iWARP
		e.grh = e.Dev.Port.LinkLayer == "Ethernet" && !e.Dev.Ctx.IsIWARP()
	}
	if err != nil {
		return err
	}
	if got := e.QP.Caps().MaxInlineData; got < e.Inline {
		return fmt.Errorf("inline size %d bytes: %w: %s grants %d (%s)", e.Inline, verbs.ErrNotSupported, e.Dev.Ctx.Name(), got, e.InlineWhy)
	}
	return nil
}

// checkUDSize refuses UD messages larger than the path MTU: a UD message is
// a single packet.
func checkUDSize(size, mtu int) error {
	if size > mtu {
		return fmt.Errorf("size %d bytes exceeds the path MTU %d bytes: a UD message is one packet (use a size of at most %d bytes, or --qp-type rc or uc)",
			size, mtu, mtu)
	}
	return nil
}

// maxRdAtomic is the READ/atomic responder depth this side grants: for
// READ and atomic tests --outstanding-reads, or the device's max_qp_rd_atom
// (perftest's default); 1 for tests that issue no READs or atomics.
func (e *Endpoint) maxRdAtomic() int {
	if !e.Spec.ReadsOrAtomics() {
		return 1
	}
	if n := e.Spec.OutstandingReads; n > 0 {
		return min(n, e.Dev.Attr.MaxQPRdAtom)
	}
	return max(1, e.Dev.Attr.MaxQPRdAtom)
}

// initDepth is the READ/atomic initiator depth towards a peer that grants
// peer: at most the peer's responder depth, this device's
// max_qp_init_rd_atom and --outstanding-reads.
func (e *Endpoint) initDepth(peer int) int {
	n := min(peer, e.Dev.Attr.MaxQPInitRdAtom)
	if o := e.Spec.OutstandingReads; o > 0 {
		n = min(n, o)
	}
	return max(1, n)
}

// Info is what the peer needs. With rdma_cm, which connects the QPs, it
// carries only the target buffer (QPN and PSN are 0).
func (e *Endpoint) Info() proto.QPInfo {
	var qpn uint32
	if e.QP != nil && e.CMID == nil {
		qpn = e.QP.QPN()
	}
	return proto.QPInfo{Device: e.Dev.Ctx.Name(), QPN: qpn, PSN: e.psn, LID: e.Dev.Port.LID, GID: e.Dev.GID.GID.String(), GIDIndex: e.Dev.GID.Index,
		GIDType: e.Dev.GID.Type.String(), LinkLayer: e.Dev.Port.LinkLayer, ActiveMTU: e.Dev.Port.ActiveMTU,
		MaxRdAtomic: e.maxRdAtomic(), RKey: e.MR.RKey(), Addr: e.MR.Addr() + uint64(e.Area), Len: uint64(e.Spec.TargetLen()), QKey: e.QKey,
		RecvStep: RecvStep(e.Spec)}
}

// connect moves the QP to RTS towards the peer and creates the engine. It
// checks the peer's parameters before any traffic. It returns the path MTU.
func (e *Endpoint) connect(r proto.QPInfo) (int, error) {
	s := e.Spec
	if r.LinkLayer != e.Dev.Port.LinkLayer {
		return 0, fmt.Errorf("link layer mismatch: local %s, remote %s", e.Dev.Port.LinkLayer, r.LinkLayer)
	}
	var dgid verbs.GID
	if err := dgid.UnmarshalText([]byte(r.GID)); err != nil {
		return 0, fmt.Errorf("peer QP info: %w", err)
	}
	useGRH := useGRH(e.Dev.Port, e.Dev.GIDGiven)
	e.grh = useGRH
	if useGRH {
		_, l4 := e.Dev.GID.GID.IPv4()
		_, r4 := dgid.IPv4()
		if r.GIDType != e.Dev.GID.Type.String() || l4 != r4 {
			return 0, fmt.Errorf("GID mismatch: local %s %s (index %d), remote %s %s (index %d): use GIDs of the same type and address family on both sides (--gid-index)",
				e.Dev.GID.Type, e.Dev.GID.GID, e.Dev.GID.Index, r.GIDType, r.GID, r.GIDIndex)
		}
	}
	if err := CheckPeerBuffer(r, s.TargetLen()); err != nil {
		return 0, err
	}
	mtu := min(e.Dev.Port.ActiveMTU, r.ActiveMTU)
	if s.MTU != 0 {
		mtu = min(mtu, s.MTU)
	}
	ud := e.QP.Type() == verbs.QPTypeUD
	var dest verbs.UDDest
	if ud {
		if err := checkUDSize(s.Size, mtu); err != nil {
			return 0, err
		}
		if r.QKey == 0 {
			return 0, fmt.Errorf("peer QP info: a UD peer must send its Q_Key")
		}
		if err := e.QP.ToInitPKey(e.Dev.Port.Port, 0, e.QKey, s.PKeyIndex); err != nil {
			return 0, err
		}
	} else if err := e.QP.ToInitPKey(e.Dev.Port.Port, e.access, 0, s.PKeyIndex); err != nil {
		return 0, err
	}
	// ToRTR and ToRTS give UC and UD only the attributes their type takes
	if err := e.QP.ToRTR(verbs.RTRAttr{Port: e.Dev.Port.Port, PathMTU: mtu, DestQPN: r.QPN, RQPSN: r.PSN, DLID: r.LID,
		UseGRH: useGRH, DGID: dgid, SGIDIndex: e.Dev.GID.Index, MaxDestRdAtomic: e.maxRdAtomic(), MinRNRTimer: spec.DefaultRNRTimer,
		SL: s.SL, TrafficClass: s.TClass}); err != nil {
		return 0, err
	}
	e.RdDepth = e.initDepth(r.MaxRdAtomic)
	if err := e.QP.ToRTS(verbs.RTSAttr{SQPSN: e.psn, Timeout: s.QPTimeout, RetryCnt: s.RetryCount, RNRRetry: s.RNRRetry,
		MaxRdAtomic: e.RdDepth}); err != nil {
		return 0, err
	}
	if ud {
		ah, err := e.pd.CreateAH(verbs.AHAttr{Port: e.Dev.Port.Port, DLID: r.LID, UseGRH: useGRH, DGID: dgid, SGIDIndex: e.Dev.GID.Index,
			SL: s.SL, TrafficClass: s.TClass})
		if err != nil {
			return 0, err
		}
		e.ah = ah
		dest = verbs.UDDest{AH: ah, QPN: r.QPN, QKey: r.QKey}
	}
	e.setup = time.Since(e.setupStart)
	if e.Idle {
		return mtu, nil
	}
	return mtu, e.startEngine(r, dest)
}

// startEngine creates the engine of a connected QP towards the peer's
// target buffer r and, for SEND tests, posts the first receives.
func (e *Endpoint) startEngine(r proto.QPInfo, dest verbs.UDDest) error {
	s := e.Spec
	v, ok := OpVerbs[s.Op]
	if !ok {
		return fmt.Errorf("op %q has no RDMA operation", s.Op)
	}
	e.peerRecvStep = r.RecvStep
	step, cycle := s.AddrStep()
	eng, err := verbs.NewEngine(verbs.EngineConfig{QP: e.QP, MR: e.MR, Op: v.Code, Size: s.Size, RecvOffset: e.Area, AddrStep: step, AddrCycle: cycle, RecvStep: RecvStep(s),
		RemoteAddr: r.Addr, RKey: r.RKey, Inline: e.Inline > 0 && s.Size <= e.Inline, TxDepth: s.TxDepth, CQMod: s.CQMod,
		RxDepth: s.RxDepth, Timeout: EngineTimeout, Samples: SampleCap(), PostList: s.PostList, Event: s.Event, UD: dest, PerOp: e.perOp(),
		Spread: e.spread, SGE: s.NumSGE()})
	if err != nil {
		return err
	}
	e.Eng = eng
	if r := s.Pace(); r > 0 && e.client { // load QPs: their loadSpec carries each one's pace
		eng.SetPace(r / float64(s.NumQPs())) // the limit is the test's, over its QPs
	}
	if s.Traits().ConsumesRecv {
		if err := eng.PostRecvs(e.recvs); err != nil {
			return err
		}
	}
	return nil
}

// perOp is the engine's per-operation registration (per-op clients), or nil.
func (e *Endpoint) perOp() *verbs.PerOp {
	if e.OpBuf == nil {
		return nil
	}
	return &verbs.PerOp{PD: e.pd, Buf: e.OpBuf}
}

// Close releases everything in reverse order of creation and returns the
// buffer to the pool (the test's Memory closes the pool and PD).
func (e *Endpoint) Close() error {
	var errs []error
	for _, c := range []interface{ Close() error }{e.Eng, e.QP, e.CMID, e.ah, e.OpBuf, e.rcq, e.scq} {
		errs = append(errs, c.Close()) // nil on a nil object
	}
	if e.MR != nil {
		errs = append(errs, e.MR.Put())
		e.MR = nil
	}
	return errors.Join(errs...)
}

// CheckPeerBuffer refuses a peer target area that cannot hold size bytes or
// whose end overflows.
func CheckPeerBuffer(r proto.QPInfo, size int) error {
	if r.Len < uint64(size) || r.Addr+r.Len < r.Addr {
		return fmt.Errorf("peer's buffer (%d bytes at 0x%x) cannot hold %d-byte messages", r.Len, r.Addr, size)
	}
	return nil
}

// EngineTimeout is the longest a C loop waits without progress (the
// engine, the TCP baseline and the MR benchmark; tests shorten it).
var EngineTimeout = 10 * time.Second

// Supports refuses, before anything is created, a spec the device cannot
// run, naming the device and what it lacks; what the device lacks wraps
// verbs.ErrNotSupported (exit 3). The client checks before it sends the
// test, the server again for its own device.
func Supports(d *device.Device, s spec.Spec) error {
	return device.Lacks(s.CheckDevice(d.Limits(), 2*endpointArea(s)))
}

// cqSlack is what each CQ holds beyond its depth (newEndpoint).
const cqSlack = spec.CQSlack

// CheckSpecs holds every spec of a run, and its load streams, against the
// device's limits (supports) before the first test starts; nil for a
// TCP-only client (dev nil) and for TCP specs.
func CheckSpecs(dev *device.Device, specs []spec.Spec) error {
	if dev == nil {
		return nil
	}
	for _, s := range specs {
		if s.Transport == result.TransportTCP {
			continue
		}
		err := Supports(dev, s)
		if err == nil && s.Load != nil && s.Load.QPs > 0 {
			err = Supports(dev, s.LoadSpec())
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
	}
	return nil
}

// SourceBytes is the endpoint's source area (what SEND and WRITE post):
// in the per-op buffer with per-op registration, else in the pool buffer.
func (e *Endpoint) SourceBytes() []byte {
	if e.OpBuf != nil {
		return e.OpBuf.Bytes()[:e.Spec.Size]
	}
	return e.MR.Bytes()[:e.Spec.Size]
}

// SinkBytes is where the endpoint's READs land.
func (e *Endpoint) SinkBytes() []byte {
	if e.OpBuf != nil {
		return e.OpBuf.Bytes()[e.Area : e.Area+e.Spec.Size]
	}
	return e.MR.Bytes()[e.Area : e.Area+e.Spec.Size]
}

// TargetBytes is the endpoint's target area: where the peer's WRITEs land
// and READs read from.
func (e *Endpoint) TargetBytes() []byte { return e.MR.Bytes()[e.Area : e.Area+e.Spec.Size] }
