package peer

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/rdmabench/rdmabench/bench/cmchan"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// -R against a perftest tool (docs/perftest.md, "Facing perftest"):
// perftest 6.06 runs its whole exchange over an rdma_cm channel
// (bench/cmchan, PerftestCMConn; per-QP records in binary: wire.Conn.Binary),
// then connects the test's QPs with rdma_cm on the same port
// (connectPerftestCM).

// perftestCMRetryFor bounds the client's retries of a rejected or unreachable request, perftestCMRetryGap
// apart (perftest's server listens only after the sync swap; its client retries 10 times 100 ms apart).
var perftestCMRetryFor = 10 * time.Second

const perftestCMRetryGap = 100 * time.Millisecond

// connectPerftestCM connects the test's QPs with rdma_cm in perftest's
// order: the server listens again on the channel's port (any address),
// one record swap, then the client connects QP after QP, each the
// server's next request (endpoint.CMListener in perftest mode), and one more swap
// (perftest 6.06 swaps a record of zeros once its QPs are connected: read
// off the guest).
func connectPerftestCM(ctx context.Context, wc *wire.Conn, cc *PerftestCMConn, dev *device.Device, eps *endpoint.Test, withGID bool) error {
	qps := eps.Measured()
	var err error
	if cc.Client() {
		if eps.CMCh, err = verbs.NewEventChannel(); err != nil {
			return err
		}
	} else {
		if eps.Lis, err = endpoint.BindCMAt(netip.AddrPortFrom(netip.IPv4Unspecified(), cc.Port())); err != nil {
			return fmt.Errorf("-R: rdma_cm listener for the test's QPs on port %d: %w", cc.Port(), err)
		}
		eps.Lis.Perftest = true
		if err := eps.Lis.ID.Listen(spec.MaxQPs); err != nil {
			return fmt.Errorf("-R: rdma_cm listen on port %d: %w", cc.Port(), err)
		}
	}
	if _, err := wc.Dest(wire.Dest{}, withGID, "sync before rdma_cm"); err != nil { // perftest's QPs do not exist yet
		return err
	}
	abort := make(chan struct{})
	defer context.AfterFunc(ctx, func() { close(abort) })()
	deadline := time.Now().Add(endpoint.CMTimeout * time.Duration(2+len(qps)))
	if !cc.Client() {
		err = eps.Lis.AcceptAll(dev, qps, deadline, abort)
	}
	for i := 0; i < len(qps) && cc.Client() && err == nil; i++ {
		err = cmConnectPerftest(qps[i], eps.CMCh, cc.Peer(), i, len(qps), deadline)
	}
	if err != nil {
		return fmt.Errorf("-R: the test's QPs: %w", err)
	}
	_, err = wc.Dest(wire.Dest{}, withGID, "sync after rdma_cm")
	return err
}

// cmConnectPerftest connects e's QP to a perftest server at
// dst (Endpoint.CMConnect; perftest ignores the private data), retrying a rejected
// or unreachable request perftestCMRetryGap apart until the retry window
// or deadline ends.
func cmConnectPerftest(e *endpoint.Endpoint, ch *verbs.EventChannel, dst netip.AddrPort, i, n int, deadline time.Time) error {
	until := time.Now().Add(perftestCMRetryFor)
	for try := 1; ; try++ {
		_, err := e.CMConnect(ch, dst, i, n, [proto.CMTokenLen]byte{})
		if err == nil {
			return nil
		}
		if next := time.Now().Add(perftestCMRetryGap); !cmRetryable(err) || next.After(until) || next.After(deadline) {
			return fmt.Errorf("QP %d of %d to %s: %w (%d tries)", i, n, dst, err, try)
		}
		if err := errors.Join(e.QP.Close(), e.CMID.Close()); err != nil { // a new id and QP for the next try
			return err
		}
		e.QP, e.CMID = nil, nil
		time.Sleep(perftestCMRetryGap)
	}
}

// cmRetryable: the server is not listening (yet).
func cmRetryable(err error) bool {
	var ee *verbs.EventError
	return errors.As(err, &ee) && (ee.Got == verbs.CMEventRejected || ee.Got == verbs.CMEventUnreachable || ee.Got == verbs.CMEventConnectError)
}

// PerftestCMConn is perftest's -R exchange channel (bench/cmchan) and the device rdma_cm
// bound it to, on which the test's QPs then run; Close closes both.
type PerftestCMConn struct {
	*cmchan.Conn
	dev *device.Device
}

// Close closes the channel, then its device.
func (c *PerftestCMConn) Close() error { return errors.Join(c.Conn.Close(), c.dev.Close()) }

// cmOpener opens an id's device as a Device for cmchan (devName, when set,
// must be it) and keeps it in *dev.
func cmOpener(devName string, gidIndex int, dev **device.Device) cmchan.OpenFunc {
	return func(id *verbs.CMID) (*verbs.Context, error) {
		if name := id.DeviceName(); devName != "" && devName != name {
			return nil, fmt.Errorf("-R: rdma_cm reaches the peer through %s, not -d %s", name, devName)
		}
		d, err := device.OpenCM(id.DeviceName(), id.Port(), gidIndex, netip.Addr{})
		if err != nil {
			return nil, err
		}
		d.Reason, *dev = "chosen by rdma_cm", d
		return d.Ctx, nil
	}
}

// DialPerftestCM connects perftest's -R channel to a server at server. No
// rdma_cm listener there gives an error wrapping ErrNotPerftest.
func DialPerftestCM(ctx context.Context, server netip.AddrPort, devName string, gidIndex int, timeout time.Duration) (*PerftestCMConn, error) {
	if server.Addr().Unmap().IsLoopback() {
		return nil, fmt.Errorf("%w: -R (rdma_cm) cannot use the loopback address %s: connect to the server's address on an RDMA device's netdev (in the test guest 192.0.2.1, rxe1)",
			ErrPerftestUnsupported, server.Addr())
	}
	var dev *device.Device
	c, err := cmchan.Dial(ctx, server, cmOpener(devName, gidIndex, &dev), timeout)
	return perftestCMConn(c, dev, err)
}

// AcceptPerftestCM accepts a perftest -R client's channel on l
// (cmchan.Listen on -p), opening its device.
func AcceptPerftestCM(ctx context.Context, l *cmchan.Listener, devName string, gidIndex int, timeout time.Duration) (*PerftestCMConn, error) {
	var dev *device.Device
	c, err := l.Accept(ctx, cmOpener(devName, gidIndex, &dev), timeout)
	return perftestCMConn(c, dev, err)
}

func perftestCMConn(c *cmchan.Conn, dev *device.Device, err error) (*PerftestCMConn, error) {
	switch {
	case err == nil:
		return &PerftestCMConn{Conn: c, dev: dev}, nil
	case dev != nil:
		dev.Close()
	}
	if errors.Is(err, cmchan.ErrRefused) {
		return nil, fmt.Errorf("%w: %v", ErrNotPerftest, err)
	}
	return nil, fmt.Errorf("-R: %w", err)
}
