package bench

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
	"github.com/rdmabench/rdmabench/verbs"
)

// endpoint is one side of one test: fresh CQs, QP and engine, and a buffer
// of the test's pool (testMemory), in the pool's PD.
type endpoint struct {
	dev    *device.Device
	spec   spec.Spec
	client bool
	pd     *verbs.PD // the pool's (not owned)
	scq    *verbs.CQ
	rcq    *verbs.CQ
	mr     *verbs.PoolBuf // registered memory: source at 0, target/receive area at area
	opBuf  *verbs.Buffer  // per-op client: unregistered memory each operation registers
	qp     *verbs.QP
	ah     *verbs.AH // UD: the address handle of the peer
	qkey   uint32    // UD: this QP's Q_Key
	eng    *verbs.Engine
	area   int // offset of the target area in the buffer
	psn    uint32
	access verbs.Access
	cmid   *verbs.CMID // rdma_cm: the id the QP belongs to
	// setupStart is when this QP's creation began and setup how long it took
	// to reach RTS from there (connection setup time).
	setupStart time.Time
	setup      time.Duration
	// inline is the QP's inline size, bytes, and inlineWhy the reason
	// (device.Device.InlineFor); a message is sent inline when it fits.
	inline    int
	inlineWhy string
	// rdDepth is the READ/atomic initiator depth the QP got (max_rd_atomic).
	rdDepth int
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
	// idle: an idle QP (--qps-idle): connected to RTS, no engine.
	idle bool
}

// sampleCap is the C sample buffer size per engine, entries (8 bytes each;
// a power of two, for the bandwidth sender's ring). A variable only so that
// tests can cross a buffer boundary in few operations.
var sampleCap = 1 << 16

// remoteAccess is what the peer may do to this side's memory: only what the
// test needs (least privilege).
// On iWARP the sink of a READ must be remotely writable too: iWARP carries
// READ responses as writes into it.
//
// In a bidirectional test (-b) each side is both initiator and target of the
// operation, so each gets what either side needs of a one-way test.
func remoteAccess(s spec.Spec, client, iwarp bool) verbs.Access {
	if s.Bidirectional {
		s.Bidirectional = false
		return remoteAccess(s, false, iwarp) | remoteAccess(s, true, iwarp)
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
func newEndpoint(dev *device.Device, s spec.Spec, client bool, pool *verbs.Pool, srq *verbs.SRQ) (_ *endpoint, err error) {
	e := &endpoint{dev: dev, spec: s, client: client, access: remoteAccess(s, client, dev.Ctx.IsIWARP()), srq: srq, recvs: recvPosts(s)}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if err := supports(dev, s); err != nil {
		return nil, err
	}
	if err := checkChoices(dev, s); err != nil {
		return nil, err
	}
	if e.inline, e.inlineWhy, err = dev.InlineFor(s); err != nil {
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
	e.area = endpointArea(s)
	if e.mr, err = pool.Get(); err != nil { // registered once per test, for every QP of it
		return nil, err
	}
	if client && s.MRModeOrDefault() == result.MRModePerOp {
		if e.opBuf, err = verbs.AllocBuffer(2*e.area, s.HugePages); err != nil {
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
		e.qkey = max(binary.BigEndian.Uint32(b[:])&0x7fffffff, 1)
	}
	return e, nil
}

// createQP creates the QP: with ibv_create_qp, or with rdma_create_qp on id.
// It fails when the device grants less inline data than requested.
func (e *endpoint) createQP(id *verbs.CMID) error {
	s := e.spec
	qpType, err := device.QPType(s)
	if err != nil {
		return err
	}
	cfg := verbs.QPConfig{Type: qpType, SendCQ: e.scq, RecvCQ: e.rcq, SRQ: e.srq,
		Caps: verbs.QPCaps{MaxSendWR: s.TxDepth, MaxRecvWR: s.RxDepth, MaxSendSGE: s.NumSGE(), MaxInlineData: e.inline}}
	if e.srq != nil {
		cfg.Caps.MaxRecvWR = 0 // its receives come from the SRQ
	}
	if id == nil {
		e.qp, err = e.pd.CreateQP(cfg)
	} else {
		e.qp, err = id.CreateQP(e.pd, cfg)
		// rdma_cm builds the address vector: a GRH on RoCE, none within
		// an IB subnet (its path's hop limit is 0), none on iWARP
		e.grh = e.dev.Port.LinkLayer == "Ethernet" && !e.dev.Ctx.IsIWARP()
	}
	if err != nil {
		return err
	}
	if got := e.qp.Caps().MaxInlineData; got < e.inline {
		return fmt.Errorf("inline size %d bytes: %w: %s grants %d (%s)", e.inline, verbs.ErrNotSupported, e.dev.Ctx.Name(), got, e.inlineWhy)
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
func (e *endpoint) maxRdAtomic() int {
	if !e.spec.ReadsOrAtomics() {
		return 1
	}
	if n := e.spec.OutstandingReads; n > 0 {
		return min(n, e.dev.Attr.MaxQPRdAtom)
	}
	return max(1, e.dev.Attr.MaxQPRdAtom)
}

// initDepth is the READ/atomic initiator depth towards a peer that grants
// peer: at most the peer's responder depth, this device's
// max_qp_init_rd_atom and --outstanding-reads.
func (e *endpoint) initDepth(peer int) int {
	n := min(peer, e.dev.Attr.MaxQPInitRdAtom)
	if o := e.spec.OutstandingReads; o > 0 {
		n = min(n, o)
	}
	return max(1, n)
}

// info is what the peer needs. With rdma_cm, which connects the QPs, it
// carries only the target buffer (QPN and PSN are 0).
func (e *endpoint) info() proto.QPInfo {
	var qpn uint32
	if e.qp != nil && e.cmid == nil {
		qpn = e.qp.QPN()
	}
	return proto.QPInfo{Device: e.dev.Ctx.Name(), QPN: qpn, PSN: e.psn, LID: e.dev.Port.LID, GID: e.dev.GID.GID.String(), GIDIndex: e.dev.GID.Index,
		GIDType: e.dev.GID.Type.String(), LinkLayer: e.dev.Port.LinkLayer, ActiveMTU: e.dev.Port.ActiveMTU,
		MaxRdAtomic: e.maxRdAtomic(), RKey: e.mr.RKey(), Addr: e.mr.Addr() + uint64(e.area), Len: uint64(e.spec.TargetLen()), QKey: e.qkey,
		RecvStep: recvStep(e.spec)}
}

// connect moves the QP to RTS towards the peer and creates the engine. It
// checks the peer's parameters before any traffic. It returns the path MTU.
func (e *endpoint) connect(r proto.QPInfo) (int, error) {
	s := e.spec
	if r.LinkLayer != e.dev.Port.LinkLayer {
		return 0, fmt.Errorf("link layer mismatch: local %s, remote %s", e.dev.Port.LinkLayer, r.LinkLayer)
	}
	var dgid verbs.GID
	if err := dgid.UnmarshalText([]byte(r.GID)); err != nil {
		return 0, fmt.Errorf("peer QP info: %w", err)
	}
	useGRH := useGRH(e.dev.Port, e.dev.GIDGiven)
	e.grh = useGRH
	if useGRH {
		_, l4 := e.dev.GID.GID.IPv4()
		_, r4 := dgid.IPv4()
		if r.GIDType != e.dev.GID.Type.String() || l4 != r4 {
			return 0, fmt.Errorf("GID mismatch: local %s %s (index %d), remote %s %s (index %d): use GIDs of the same type and address family on both sides (--gid-index)",
				e.dev.GID.Type, e.dev.GID.GID, e.dev.GID.Index, r.GIDType, r.GID, r.GIDIndex)
		}
	}
	if err := checkPeerBuffer(r, s.TargetLen()); err != nil {
		return 0, err
	}
	mtu := min(e.dev.Port.ActiveMTU, r.ActiveMTU)
	if s.MTU != 0 {
		mtu = min(mtu, s.MTU)
	}
	ud := e.qp.Type() == verbs.QPTypeUD
	var dest verbs.UDDest
	if ud {
		if err := checkUDSize(s.Size, mtu); err != nil {
			return 0, err
		}
		if r.QKey == 0 {
			return 0, fmt.Errorf("peer QP info: a UD peer must send its Q_Key")
		}
		if err := e.qp.ToInitPKey(e.dev.Port.Port, 0, e.qkey, s.PKeyIndex); err != nil {
			return 0, err
		}
	} else if err := e.qp.ToInitPKey(e.dev.Port.Port, e.access, 0, s.PKeyIndex); err != nil {
		return 0, err
	}
	// ToRTR and ToRTS give UC and UD only the attributes their type takes
	if err := e.qp.ToRTR(verbs.RTRAttr{Port: e.dev.Port.Port, PathMTU: mtu, DestQPN: r.QPN, RQPSN: r.PSN, DLID: r.LID,
		UseGRH: useGRH, DGID: dgid, SGIDIndex: e.dev.GID.Index, MaxDestRdAtomic: e.maxRdAtomic(), MinRNRTimer: spec.DefaultRNRTimer,
		SL: s.SL, TrafficClass: s.TClass}); err != nil {
		return 0, err
	}
	e.rdDepth = e.initDepth(r.MaxRdAtomic)
	if err := e.qp.ToRTS(verbs.RTSAttr{SQPSN: e.psn, Timeout: s.QPTimeout, RetryCnt: s.RetryCount, RNRRetry: s.RNRRetry,
		MaxRdAtomic: e.rdDepth}); err != nil {
		return 0, err
	}
	if ud {
		ah, err := e.pd.CreateAH(verbs.AHAttr{Port: e.dev.Port.Port, DLID: r.LID, UseGRH: useGRH, DGID: dgid, SGIDIndex: e.dev.GID.Index,
			SL: s.SL, TrafficClass: s.TClass})
		if err != nil {
			return 0, err
		}
		e.ah = ah
		dest = verbs.UDDest{AH: ah, QPN: r.QPN, QKey: r.QKey}
	}
	e.setup = time.Since(e.setupStart)
	if e.idle {
		return mtu, nil
	}
	return mtu, e.startEngine(r, dest)
}

// startEngine creates the engine of a connected QP towards the peer's
// target buffer r and, for SEND tests, posts the first receives.
func (e *endpoint) startEngine(r proto.QPInfo, dest verbs.UDDest) error {
	s := e.spec
	v, ok := opVerbs[s.Op]
	if !ok {
		return fmt.Errorf("op %q has no RDMA operation", s.Op)
	}
	e.peerRecvStep = r.RecvStep
	step, cycle := s.AddrStep()
	eng, err := verbs.NewEngine(verbs.EngineConfig{QP: e.qp, MR: e.mr, Op: v.code, Size: s.Size, RecvOffset: e.area, AddrStep: step, AddrCycle: cycle, RecvStep: recvStep(s),
		RemoteAddr: r.Addr, RKey: r.RKey, Inline: e.inline > 0 && s.Size <= e.inline, TxDepth: s.TxDepth, CQMod: s.CQMod,
		RxDepth: s.RxDepth, Timeout: EngineTimeout, Samples: sampleCap, PostList: s.PostList, Event: s.Event, UD: dest, PerOp: e.perOp(),
		Spread: e.spread, SGE: s.NumSGE()})
	if err != nil {
		return err
	}
	e.eng = eng
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
func (e *endpoint) perOp() *verbs.PerOp {
	if e.opBuf == nil {
		return nil
	}
	return &verbs.PerOp{PD: e.pd, Buf: e.opBuf}
}

// close releases everything in reverse order of creation and returns the
// buffer to the pool (the test's testMemory closes the pool and PD).
func (e *endpoint) close() error {
	var errs []error
	for _, c := range []interface{ Close() error }{e.eng, e.qp, e.cmid, e.ah, e.opBuf, e.rcq, e.scq} {
		errs = append(errs, c.Close()) // nil on a nil object
	}
	if e.mr != nil {
		errs = append(errs, e.mr.Put())
		e.mr = nil
	}
	return errors.Join(errs...)
}

// checkPeerBuffer refuses a peer target area that cannot hold size bytes or
// whose end overflows.
func checkPeerBuffer(r proto.QPInfo, size int) error {
	if r.Len < uint64(size) || r.Addr+r.Len < r.Addr {
		return fmt.Errorf("peer's buffer (%d bytes at 0x%x) cannot hold %d-byte messages", r.Len, r.Addr, size)
	}
	return nil
}
