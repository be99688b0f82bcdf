package endpoint

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// rdma_cm facing a perftest -R peer (bench/dropin/peer, docs/perftest.md
// "Facing perftest"): the data plane's half. perftest's requests carry no
// private data (the server's n-th request connects QP n), and its server
// listens only after a record swap, so the client retries a refused
// request. The drop-in swaps the records around these two calls:
// PreparePerftestCM, then ConnectPerftestCM.

// perftestCMRetryFor bounds the client's retries of a rejected or
// unreachable request, perftestCMRetryGap apart (perftest's server listens
// only after the sync swap; its client retries 10 times 100 ms apart).
var perftestCMRetryFor = 10 * time.Second

const perftestCMRetryGap = 100 * time.Millisecond

// PreparePerftestCM readies the test's rdma_cm side before perftest's
// sync swap: the client's event channel, or the server's listener on port
// (any address) for a perftest client's requests.
func (t *Test) PreparePerftestCM(client bool, port uint16) error {
	var err error
	if client {
		t.CMCh, err = verbs.NewEventChannel()
		return err
	}
	if t.Lis, err = BindCMAt(netip.AddrPortFrom(netip.IPv4Unspecified(), port)); err != nil {
		return fmt.Errorf("-R: rdma_cm listener for the test's QPs on port %d: %w", port, err)
	}
	t.Lis.Perftest = true
	if err := t.Lis.ID.Listen(spec.MaxQPs); err != nil {
		return fmt.Errorf("-R: rdma_cm listen on port %d: %w", port, err)
	}
	return nil
}

// ConnectPerftestCM connects the test's measured QPs on dev in perftest's
// order: the server accepts its client's requests, the client connects QP
// after QP to dst; until a deadline of CMTimeout per QP and two more, or
// abort is closed.
func (t *Test) ConnectPerftestCM(dev *device.Device, client bool, dst netip.AddrPort, abort <-chan struct{}) error {
	qps := t.Measured()
	deadline := time.Now().Add(CMTimeout * time.Duration(2+len(qps)))
	if !client {
		return t.Lis.AcceptAll(dev, qps, deadline, abort)
	}
	for i := range qps {
		if err := cmConnectPerftest(qps[i], t.CMCh, dst, i, len(qps), deadline); err != nil {
			return err
		}
	}
	return nil
}

// cmConnectPerftest connects e's QP to a perftest server at
// dst (Endpoint.CMConnect; perftest ignores the private data), retrying a rejected
// or unreachable request perftestCMRetryGap apart until the retry window
// or deadline ends.
func cmConnectPerftest(e *Endpoint, ch *verbs.EventChannel, dst netip.AddrPort, i, n int, deadline time.Time) error {
	until := time.Now().Add(perftestCMRetryFor)
	for try := 1; ; try++ {
		_, err := e.CMConnect(ch, dst, i, n, [proto.CMTokenLen]byte{})
		if err == nil {
			return nil
		}
		if next := time.Now().Add(perftestCMRetryGap); !cmRetryable(err) || next.After(until) || next.After(deadline) {
			return fmt.Errorf("QP %d of %d to %s: %w (%d tries)", i, n, dst, err, try)
		}
		if err := e.dropCM(); err != nil { // a new id and QP for the next try
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
