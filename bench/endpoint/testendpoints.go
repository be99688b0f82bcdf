package endpoint

import (
	"errors"
	"fmt"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/bench/spread"
	"github.com/rdmabench/rdmabench/verbs"
)

// Test is one side's QPs of a test: the measured one and, for
// latency under load, the load QPs.
type Test struct {
	Probe  *Endpoint
	Extra  []*Endpoint // the measured QPs after probe (Spec.QPs > 1)
	Loads  []*Endpoint
	Mem    *Memory        // the pools every QP above takes its buffer from
	SRQ    *verbs.SRQ     // the measured QPs' shared receive queue (--srq), or nil
	Spread *spread.Memory // the region or per-MR buffers of a spread test (--region, --mrs), or nil
	Idle   []*Endpoint    // the QPs that carry nothing (--qps-idle): connected, no engine
	// rdma_cm tests: the client's event channel, or the server's listener
	// (closed after the endpoints and their ids)
	CMCh *verbs.EventChannel
	Lis  *CMListener
}

// Measured is every measured QP: probe first, then extra.
func (t *Test) Measured() []*Endpoint {
	return append([]*Endpoint{t.Probe}, t.Extra...)
}

// NewTest creates one side's QPs of a test of s on dev, with their
// memory, the spread region and the SRQ; Close them.
func NewTest(dev *device.Device, s spec.Spec, client bool) (_ *Test, err error) {
	t := &Test{}
	if err := Supports(dev, s); s.Spreads() && err != nil { // max_mr, max_mr_size before the region is mapped
		return nil, err
	}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if t.Mem, err = NewMemory(dev, s, client); err != nil {
		return nil, err
	}
	access := func(s spec.Spec) verbs.Access { // the op's remote access only (s: the measured or the load QPs' spec)
		return verbs.AccessLocalWrite | RemoteAccess(s, client, dev.Ctx.IsIWARP()) | relaxedAccess(s)
	}
	if t.Spread, err = spread.New(t.Mem.PD, s, client, access, dev.BindMemory); err != nil {
		return nil, err
	}
	if UsesSRQ(s, client) {
		if t.SRQ, err = newSRQ(dev, s, t.Mem.PD); err != nil {
			return nil, err
		}
	}
	if t.Probe, err = newEndpoint(dev, s, client, t.Mem.Measured, t.SRQ); err != nil {
		return nil, err
	}
	for i := 1; i < s.NumQPs(); i++ {
		ep, err := newEndpoint(dev, s, client, t.Mem.Measured, t.SRQ)
		if err != nil {
			return nil, fmt.Errorf("QP %d: %w", i, err)
		}
		t.Extra = append(t.Extra, ep)
	}
	if t.SRQ != nil { // the SRQ holds one QP's receives: each posts its share
		for i, ep := range t.Measured() {
			ep.recvs = int(QPIters(int64(recvPosts(s)), s.NumQPs(), i))
		}
	}
	for i := 0; i < s.IdleQPs; i++ {
		ep, err := newEndpoint(dev, s.IdleSpec(), client, t.Mem.Idle, nil)
		if err != nil {
			return nil, fmt.Errorf("idle QP %d: %w", i, err)
		}
		ep.Idle = true
		t.Idle = append(t.Idle, ep)
	}
	if s.Load != nil {
		for i := 0; i < s.Load.QPs; i++ {
			ep, err := newEndpoint(dev, s.LoadSpecAt(i), client, t.Mem.Load, nil)
			if err != nil {
				return nil, fmt.Errorf("load QP %d: %w", i, err)
			}
			t.Loads = append(t.Loads, ep)
		}
	}
	return t, nil
}

// Info is what the peer needs of every QP of the test: the probe's, with
// the other measured, load and idle QPs' and the spread region.
func (t *Test) Info() proto.QPInfo {
	in := t.Probe.Info()
	t.Spread.SetInfo(&in) // Region, LoadRegion
	for _, ep := range t.Loads {
		in.Load = append(in.Load, ep.Info())
	}
	for _, ep := range t.Extra {
		in.QPs = append(in.QPs, ep.Info())
	}
	for _, ep := range t.Idle {
		in.Idle = append(in.Idle, ep.Info())
	}
	return in
}

// Connect connects every QP to its peer; it returns the probe's path MTU.
func (t *Test) Connect(r proto.QPInfo) (int, error) {
	if err := t.CheckPeers(r); err != nil {
		return 0, err
	}
	if err := t.setSpread(r); err != nil {
		return 0, err
	}
	for i, ep := range t.Extra {
		if _, err := ep.connect(r.QPs[i]); err != nil {
			return 0, fmt.Errorf("QP %d: %w", i+1, err)
		}
	}
	for i, ep := range t.Loads {
		if _, err := ep.connect(r.Load[i]); err != nil {
			return 0, fmt.Errorf("load QP %d: %w", i, err)
		}
	}
	for i, ep := range t.Idle {
		if _, err := ep.connect(r.Idle[i]); err != nil {
			return 0, fmt.Errorf("idle QP %d: %w", i, err)
		}
	}
	return t.Probe.connect(r)
}

// Close releases the QPs, then the SRQ, the spread region, their memory
// and rdma_cm's listener and event channel.
func (t *Test) Close() error {
	var errs []error
	for _, ep := range append(t.Loads, t.Idle...) {
		errs = append(errs, ep.Close())
	}
	for _, ep := range t.Extra {
		errs = append(errs, ep.Close())
	}
	if t.Probe != nil {
		errs = append(errs, t.Probe.Close())
	}
	errs = append(errs, t.SRQ.Close(), t.Spread.Close()) // after their QPs, before the PD
	if t.Mem != nil {
		errs = append(errs, t.Mem.Close())
	}
	if t.Lis != nil {
		errs = append(errs, t.Lis.Close())
	}
	if t.CMCh != nil {
		errs = append(errs, t.CMCh.Close())
	}
	return errors.Join(errs...)
}

// setSpread gives the initiator's measured and load QPs of a spread test
// their targets in the peer's regions r.Region, r.LoadRegion (spread.Memory.Engines).
func (t *Test) setSpread(r proto.QPInfo) error {
	sps, err := t.Spread.Engines(t.Probe.Spec, t.Probe.client, len(t.Measured()), len(t.Loads), r)
	for i, sp := range sps {
		t.All()[i].spread = sp
	}
	return err
}

// All lists every QP of the test in connection order: measured, then load.
func (t *Test) All() []*Endpoint {
	return append(t.Measured(), t.Loads...)
}

// CheckPeers checks that the peer's QP information r covers as many
// measured and load QPs as this side has.
func (t *Test) CheckPeers(r proto.QPInfo) error {
	if len(r.QPs) != len(t.Extra) || len(r.Load) != len(t.Loads) || len(r.Idle) != len(t.Idle) {
		return fmt.Errorf("peer has %d measured, %d load and %d idle QPs, this side %d, %d and %d",
			len(r.QPs)+1, len(r.Load), len(r.Idle), len(t.Extra)+1, len(t.Loads), len(t.Idle))
	}
	return nil
}

// StartCM starts the engines of QPs rdma_cm connected, towards the peer's
// buffers in r (its QPs in the order of all: measured, then load).
func (t *Test) StartCM(r proto.QPInfo) error {
	if err := t.CheckPeers(r); err != nil {
		return err
	}
	if err := t.setSpread(r); err != nil {
		return err
	}
	peers := append(append([]proto.QPInfo{r}, r.QPs...), r.Load...)
	for i, ep := range t.All() {
		if err := CheckPeerBuffer(peers[i], ep.Spec.Size); err != nil {
			return err
		}
		if err := ep.startEngine(peers[i], verbs.UDDest{}); err != nil {
			return err
		}
	}
	return nil
}

// QPIters is QP i's share of iters over n QPs: iters/n, one more for the
// first iters%n.
func QPIters(iters int64, n, i int) int64 {
	q := iters / int64(n)
	if int64(i) < iters%int64(n) {
		q++
	}
	return q
}
