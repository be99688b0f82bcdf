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
	"github.com/rdmabench/rdmabench/verbs"
)

// -R against a perftest tool (docs/perftest.md, "Facing perftest"):
// perftest 6.06 runs its whole exchange over an rdma_cm channel
// (bench/cmchan, PerftestCMConn; per-QP records in binary: wire.Conn.Binary),
// then connects the test's QPs with rdma_cm on the same port
// (connectPerftestCM).

// connectPerftestCM connects the test's QPs with rdma_cm in perftest's
// order: the server listens again on the channel's port (any address),
// one record swap, then the client connects QP after QP, each the
// server's next request (endpoint.Test.ConnectPerftestCM), and one more swap
// (perftest 6.06 swaps a record of zeros once its QPs are connected: read
// off the guest).
func connectPerftestCM(ctx context.Context, wc *wire.Conn, cc *PerftestCMConn, dev *device.Device, eps *endpoint.Test, withGID bool) error {
	if err := eps.PreparePerftestCM(cc.Client(), cc.Port()); err != nil {
		return err
	}
	if _, err := wc.Dest(wire.Dest{}, withGID, "sync before rdma_cm"); err != nil { // perftest's QPs do not exist yet
		return err
	}
	abort := make(chan struct{})
	defer context.AfterFunc(ctx, func() { close(abort) })()
	if err := eps.ConnectPerftestCM(dev, cc.Client(), cc.Peer(), abort); err != nil {
		return fmt.Errorf("-R: the test's QPs: %w", err)
	}
	_, err := wc.Dest(wire.Dest{}, withGID, "sync after rdma_cm")
	return err
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
