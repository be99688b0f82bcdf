package bench

import (
	"errors"
	"fmt"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/bench/spread"
	"github.com/rdmabench/rdmabench/verbs"
)

// testEndpoints are one side's QPs of a test: the measured one and, for
// latency under load, the load QPs.
type testEndpoints struct {
	probe  *endpoint
	extra  []*endpoint // the measured QPs after probe (Spec.QPs > 1)
	loads  []*endpoint
	mem    *testMemory    // the pools every QP above takes its buffer from
	srq    *verbs.SRQ     // the measured QPs' shared receive queue (--srq), or nil
	spread *spread.Memory // the region or per-MR buffers of a spread test (--region, --mrs), or nil
	idle   []*endpoint    // the QPs that carry nothing (--qps-idle): connected, no engine
	// rdma_cm tests: the client's event channel, or the server's listener
	// (closed after the endpoints and their ids)
	cmch *verbs.EventChannel
	lis  *cmListener
}

// measured is every measured QP: probe first, then extra.
func (t *testEndpoints) measured() []*endpoint {
	return append([]*endpoint{t.probe}, t.extra...)
}

func newTestEndpoints(dev *device.Device, s spec.Spec, client bool) (_ *testEndpoints, err error) {
	t := &testEndpoints{}
	if err := supports(dev, s); s.Spreads() && err != nil { // max_mr, max_mr_size before the region is mapped
		return nil, err
	}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	if t.mem, err = newTestMemory(dev, s, client); err != nil {
		return nil, err
	}
	access := func(s spec.Spec) verbs.Access { // the op's remote access only (s: the measured or the load QPs' spec)
		return verbs.AccessLocalWrite | remoteAccess(s, client, dev.Ctx.IsIWARP()) | relaxedAccess(s)
	}
	if t.spread, err = spread.New(t.mem.pd, s, client, access, dev.BindMemory); err != nil {
		return nil, err
	}
	if usesSRQ(s, client) {
		if t.srq, err = newSRQ(dev, s, t.mem.pd); err != nil {
			return nil, err
		}
	}
	if t.probe, err = newEndpoint(dev, s, client, t.mem.measured, t.srq); err != nil {
		return nil, err
	}
	for i := 1; i < s.NumQPs(); i++ {
		ep, err := newEndpoint(dev, s, client, t.mem.measured, t.srq)
		if err != nil {
			return nil, fmt.Errorf("QP %d: %w", i, err)
		}
		t.extra = append(t.extra, ep)
	}
	if t.srq != nil { // the SRQ holds one QP's receives: each posts its share
		for i, ep := range t.measured() {
			ep.recvs = int(qpIters(int64(recvPosts(s)), s.NumQPs(), i))
		}
	}
	for i := 0; i < s.IdleQPs; i++ {
		ep, err := newEndpoint(dev, s.IdleSpec(), client, t.mem.idle, nil)
		if err != nil {
			return nil, fmt.Errorf("idle QP %d: %w", i, err)
		}
		ep.idle = true
		t.idle = append(t.idle, ep)
	}
	if s.Load != nil {
		for i := 0; i < s.Load.QPs; i++ {
			ep, err := newEndpoint(dev, s.LoadSpecAt(i), client, t.mem.load, nil)
			if err != nil {
				return nil, fmt.Errorf("load QP %d: %w", i, err)
			}
			t.loads = append(t.loads, ep)
		}
	}
	return t, nil
}

func (t *testEndpoints) info() proto.QPInfo {
	in := t.probe.info()
	t.spread.SetInfo(&in) // Region, LoadRegion
	for _, ep := range t.loads {
		in.Load = append(in.Load, ep.info())
	}
	for _, ep := range t.extra {
		in.QPs = append(in.QPs, ep.info())
	}
	for _, ep := range t.idle {
		in.Idle = append(in.Idle, ep.info())
	}
	return in
}

// connect connects every QP to its peer; it returns the probe's path MTU.
func (t *testEndpoints) connect(r proto.QPInfo) (int, error) {
	if err := t.checkPeers(r); err != nil {
		return 0, err
	}
	if err := t.setSpread(r); err != nil {
		return 0, err
	}
	for i, ep := range t.extra {
		if _, err := ep.connect(r.QPs[i]); err != nil {
			return 0, fmt.Errorf("QP %d: %w", i+1, err)
		}
	}
	for i, ep := range t.loads {
		if _, err := ep.connect(r.Load[i]); err != nil {
			return 0, fmt.Errorf("load QP %d: %w", i, err)
		}
	}
	for i, ep := range t.idle {
		if _, err := ep.connect(r.Idle[i]); err != nil {
			return 0, fmt.Errorf("idle QP %d: %w", i, err)
		}
	}
	return t.probe.connect(r)
}

func (t *testEndpoints) close() error {
	var errs []error
	for _, ep := range append(t.loads, t.idle...) {
		errs = append(errs, ep.close())
	}
	for _, ep := range t.extra {
		errs = append(errs, ep.close())
	}
	if t.probe != nil {
		errs = append(errs, t.probe.close())
	}
	errs = append(errs, t.srq.Close(), t.spread.Close()) // after their QPs, before the PD
	if t.mem != nil {
		errs = append(errs, t.mem.close())
	}
	if t.lis != nil {
		errs = append(errs, t.lis.close())
	}
	if t.cmch != nil {
		errs = append(errs, t.cmch.Close())
	}
	return errors.Join(errs...)
}

// setSpread gives the initiator's measured and load QPs of a spread test
// their targets in the peer's regions r.Region, r.LoadRegion (spread.Memory.Engines).
func (t *testEndpoints) setSpread(r proto.QPInfo) error {
	sps, err := t.spread.Engines(t.probe.spec, t.probe.client, len(t.measured()), len(t.loads), r)
	for i, sp := range sps {
		t.all()[i].spread = sp
	}
	return err
}

// all lists every QP of the test in connection order: measured, then load.
func (t *testEndpoints) all() []*endpoint {
	return append(t.measured(), t.loads...)
}

// checkPeers checks that the peer's QP information r covers as many
// measured and load QPs as this side has.
func (t *testEndpoints) checkPeers(r proto.QPInfo) error {
	if len(r.QPs) != len(t.extra) || len(r.Load) != len(t.loads) || len(r.Idle) != len(t.idle) {
		return fmt.Errorf("peer has %d measured, %d load and %d idle QPs, this side %d, %d and %d",
			len(r.QPs)+1, len(r.Load), len(r.Idle), len(t.extra)+1, len(t.loads), len(t.idle))
	}
	return nil
}

// startCM starts the engines of QPs rdma_cm connected, towards the peer's
// buffers in r (its QPs in the order of all: measured, then load).
func (t *testEndpoints) startCM(r proto.QPInfo) error {
	if err := t.checkPeers(r); err != nil {
		return err
	}
	if err := t.setSpread(r); err != nil {
		return err
	}
	peers := append(append([]proto.QPInfo{r}, r.QPs...), r.Load...)
	for i, ep := range t.all() {
		if err := checkPeerBuffer(peers[i], ep.spec.Size); err != nil {
			return err
		}
		if err := ep.startEngine(peers[i], verbs.UDDest{}); err != nil {
			return err
		}
	}
	return nil
}
