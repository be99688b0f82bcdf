package bench

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/rdmabench/rdmabench/verbs"
)

// perftest's -R against a perftest tool (docs/perftest.md, "Facing
// perftest"). perftest 6.06 with -R speaks its whole exchange over
// rdma_cm, with no TCP connection: the server listens with rdma_cm on -p
// (any address), the client connects one RC QP there (the channel:
// perftestcm_conn.go), and every step of the exchange is one SEND on it,
// the per-QP records in binary (wire.Conn.Binary). For the test's QPs the
// server closes that listener and, after one record swap (perftest's "sync
// before creating the RDMA CM connection"), listens on the same port
// again; the client connects its QPs there one after the other, in order,
// as perftest's server accepts them (QP i is the i-th request). Neither
// side sends private data. perftest's client retries a request the server
// was not listening for yet 10 times 100 ms apart; the drop-in's client
// retries the same way until perftestCMRetryFor passes.

// perftestCM is one side's rdma_cm state for the test's QPs: the
// client's event channel and the server's address, or the server's
// listener.
type perftestCM struct {
	client bool
	ch     *verbs.EventChannel // the client's (closed by testEndpoints)
	lis    *cmListener         // the server's (closed by testEndpoints)
	dst    netip.AddrPort      // the server's rdma_cm address (client), or where the server listens
	owned  bool                // ch/lis not yet handed to testEndpoints
}

// perftestCMRetryFor bounds the client's retries of a rejected or
// unreachable connection request (perftest's server listens only after
// the sync swap).
var perftestCMRetryFor = 10 * time.Second

// perftestCMRetryGap is the wait between two tries (perftest's).
const perftestCMRetryGap = 100 * time.Millisecond

// errLoopbackCM: rdma_cm resolves no loopback address.
func errLoopbackCM(a netip.Addr) error {
	return fmt.Errorf("%w: -R (rdma_cm) cannot use the loopback address %s: connect to the server's address on an RDMA device's netdev (in the test guest 192.0.2.1, rxe1)",
		ErrPerftestUnsupported, a)
}

// newPerftestCM prepares the test QPs' rdma_cm side over the channel c:
// the client's event channel towards the channel's server, or the
// server's listener on the channel's port (any address).
func newPerftestCM(c *PerftestCMConn) (*perftestCM, error) {
	cm := &perftestCM{client: c.client, owned: true, dst: c.peer}
	var err error
	if c.client {
		cm.ch, err = verbs.NewEventChannel()
		return cm, err
	}
	if cm.lis, err = bindCMAt(netip.AddrPortFrom(netip.IPv4Unspecified(), c.port)); err != nil {
		return nil, fmt.Errorf("-R: rdma_cm listener for the test's QPs on port %d: %w", c.port, err)
	}
	if err := cm.lis.id.Listen(MaxQPs); err != nil {
		cm.close()
		return nil, fmt.Errorf("-R: rdma_cm listen on port %d: %w", c.port, err)
	}
	cm.dst = cm.lis.addr
	return cm, nil
}

// handTo gives the channel or listener to eps, which closes it after the
// endpoints' ids.
func (c *perftestCM) handTo(eps *testEndpoints) {
	eps.cmch, eps.lis, c.owned = c.ch, c.lis, false
}

// close releases what testEndpoints did not take.
func (c *perftestCM) close() {
	if c == nil || !c.owned {
		return
	}
	if c.lis != nil {
		c.lis.close()
	}
	if c.ch != nil {
		c.ch.Close()
	}
	c.owned = false
}

// connect connects every endpoint: the client's one after the other,
// QP i as perftest's server's i-th request; the server accepts the
// requests in the order they come, until deadline.
func (c *perftestCM) connect(eps []*endpoint, deadline time.Time, abort <-chan struct{}) error {
	if !c.client {
		return c.acceptPerftest(eps, deadline, abort)
	}
	for i, ep := range eps {
		if err := ep.cmConnectPerftest(c.ch, c.dst, deadline); err != nil {
			return fmt.Errorf("rdma_cm QP %d of %d to %s: %w", i, len(eps), c.dst, err)
		}
	}
	return nil
}

// cmConnectPerftest connects the endpoint's QP to a perftest server at
// dst, retrying a rejected or unreachable request perftestCMRetryGap apart
// until the retry window or deadline ends.
func (e *endpoint) cmConnectPerftest(ch *verbs.EventChannel, dst netip.AddrPort, deadline time.Time) error {
	until := earliest(deadline, time.Now().Add(perftestCMRetryFor))
	for try := 1; ; try++ {
		err := e.cmConnectOnce(ch, dst, deadline)
		if err == nil {
			return nil
		}
		if !cmRetryable(err) || time.Now().Add(perftestCMRetryGap).After(until) {
			if try > 1 {
				return fmt.Errorf("%w (%d tries)", err, try)
			}
			return err
		}
		if err := e.cmDrop(); err != nil {
			return err
		}
		time.Sleep(perftestCMRetryGap)
	}
}

// cmRetryable: the server is not listening (yet).
func cmRetryable(err error) bool {
	var ee *verbs.EventError
	return errors.As(err, &ee) && (ee.Got == verbs.CMEventRejected || ee.Got == verbs.CMEventUnreachable || ee.Got == verbs.CMEventConnectError)
}

// cmDrop closes a failed try's QP and id.
func (e *endpoint) cmDrop() error {
	if e.qp != nil {
		if err := e.qp.Close(); err != nil {
			return err
		}
		e.qp = nil
	}
	if e.cmid != nil {
		if err := e.cmid.Close(); err != nil {
			return err
		}
		e.cmid = nil
	}
	return nil
}

// cmConnectOnce is one try of cmConnectPerftest: as cmConnect, without
// rdmabench's private data.
func (e *endpoint) cmConnectOnce(ch *verbs.EventChannel, dst netip.AddrPort, deadline time.Time) error {
	e.setupStart = time.Now()
	id, err := ch.CreateID()
	if err != nil {
		return err
	}
	e.cmid = id
	if e.spec.TClass != 0 {
		if err := id.SetTOS(e.spec.TClass); err != nil {
			return err
		}
	}
	if err := id.Resolve(netip.Addr{}, dst, cmTimeout); err != nil {
		return err
	}
	if !id.UsesContext(e.dev.Ctx) {
		return fmt.Errorf("rdma_cm reaches %s through %s, but the test runs on %s", dst.Addr(), id.DeviceName(), e.dev.Ctx.Name())
	}
	if err := e.createQP(id); err != nil {
		return err
	}
	if err := e.setAckTimeout(); err != nil {
		return err
	}
	rd := e.maxRdAtomic()
	e.rdDepth = e.initDepth(rd)
	p := verbs.ConnParam{ResponderResources: rd, InitiatorDepth: e.rdDepth, RetryCount: e.spec.RetryCount, RNRRetryCount: e.spec.RNRRetry}
	if err := id.Connect(p, earliest(deadline, time.Now().Add(cmTimeout))); err != nil {
		return err
	}
	_, err = e.cmEstablished()
	return err
}

// acceptPerftest accepts one request per endpoint, in the order they
// come (perftest's client connects its QPs in order), until every one is
// established; requests beyond them are rejected.
func (c *perftestCM) acceptPerftest(eps []*endpoint, deadline time.Time, abort <-chan struct{}) error {
	l := c.lis
	next, established := 0, 0
	for established < len(eps) {
		ev, err := l.ch.Next(deadline, abort)
		if err != nil {
			return fmt.Errorf("rdma_cm: %d of %d QPs connected: %w", established, len(eps), err)
		}
		switch ev.Type {
		case verbs.CMEventConnectRequest:
			if next == len(eps) {
				ev.ID.Reject()
				ev.ID.Close()
				continue
			}
			ep := eps[next]
			if err := acceptPerftestQP(ep, ev); err != nil {
				ev.ID.Reject()
				ep.cmDrop()
				ev.ID.Close()
				return fmt.Errorf("rdma_cm: QP %d: %w", next, err)
			}
			next++
		case verbs.CMEventEstablished:
			ep := endpointOf(eps, ev.ID)
			if ep == nil {
				return fmt.Errorf("rdma_cm: ESTABLISHED for an unknown connection")
			}
			if _, err := ep.cmEstablished(); err != nil {
				return err
			}
			established++
		default:
			return fmt.Errorf("rdma_cm: %d of %d QPs connected: %s (status %d)", established, len(eps), ev.Type, ev.Status)
		}
	}
	return nil
}

// acceptPerftestQP creates ep's QP on the request's id and accepts it,
// with the READ/atomic depths clamped to the request's, as perftest does.
func acceptPerftestQP(ep *endpoint, ev verbs.CMEvent) error {
	if !ev.ID.UsesContext(ep.dev.Ctx) {
		return fmt.Errorf("request arrived on %s, the test runs on %s", ev.ID.DeviceName(), ep.dev.Ctx.Name())
	}
	ep.setupStart = time.Now()
	if err := ep.createQP(ev.ID); err != nil {
		return err
	}
	ep.cmid = ev.ID
	if err := ep.setAckTimeout(); err != nil {
		return err
	}
	rd := ep.maxRdAtomic()
	ep.rdDepth = ep.initDepth(max(ev.ResponderResources, 1))
	return ev.ID.Accept(verbs.ConnParam{ResponderResources: min(rd, max(ev.InitiatorDepth, 1)), InitiatorDepth: ep.rdDepth,
		RetryCount: ep.spec.RetryCount, RNRRetryCount: ep.spec.RNRRetry})
}

// earliest is the earlier of two times.
func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
