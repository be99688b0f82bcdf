package server

import (
	"fmt"
	"time"

	"github.com/rdmabench/rdmabench/bench/admit"
	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// The server's side of one test: set up its endpoints, answer the client's
// traffic and report what it saw.

// runTest is the server side of one test: admission, the connection of
// its data plane, then its kind and verify pass (kinds.Serve).
func (s *Server) runTest(c ctrl.Chan, dev *device.Device, spec spec.Spec) error {
	release, err := s.admit(c, spec) // before anything is mapped: see bench/endpoint/budget.go
	if err != nil {
		return err
	}
	defer release()
	t := &kinds.ServerTest{C: c, Spec: spec, CPUs: s.cfg.CPUs, Log: s.log}
	switch {
	case spec.Transport == result.TransportTCP:
		if t.TCP, err = kinds.AcceptTCP(c, spec); err != nil {
			return err
		}
		defer t.TCP.Close()
	case dev == nil:
		return kinds.RefuseRDMA(c)
	case spec.RDMACM:
		if t.EPs, err = s.connectCM(c, spec); err != nil {
			return err
		}
		defer t.EPs.Close()
	default:
		if t.EPs, err = connectExchange(c, dev, spec); err != nil {
			return err
		}
		defer t.EPs.Close()
	}
	return kinds.Serve(t)
}

// connectExchange is the server side of a connection by exchange: the
// client's QP numbers and PSNs, then the server's. The endpoints are
// closed on an error.
func connectExchange(c ctrl.Chan, dev *device.Device, spec spec.Spec) (*endpoint.Test, error) {
	// The client sends its QP info right after the test: read it first, so a
	// failure below leaves the session in step for the next test.
	var remote proto.QPInfo
	if err := c.Recv(proto.MsgQPInfo, &remote); err != nil {
		return nil, err
	}
	if err := device.CheckPair(dev, remote, !device.IsLocalAddr(admit.AddrOf(c.RemoteAddr())), "server", "client"); err != nil {
		return nil, err
	}
	eps, err := endpoint.NewTest(dev, spec, false)
	if err != nil {
		return nil, err
	}
	if _, err := eps.Connect(remote); err != nil {
		eps.Close()
		return nil, err
	}
	if err := c.Send(proto.MsgQPInfo, eps.Info()); err != nil {
		eps.Close()
		return nil, err
	}
	return eps, nil
}

// connectCM is the server side of an rdma_cm connection: it listens on
// endpoint.CMAddress, tells the client where, accepts the test's QPs and starts
// their engines once the client sent its buffers.
func (s *Server) connectCM(c ctrl.Chan, spec spec.Spec) (_ *endpoint.Test, err error) {
	addr, devName, why, err := endpoint.CMAddress(s.cfg.Device, admit.AddrOf(c.LocalAddr()))
	if err != nil {
		return nil, err
	}
	lis, err := endpoint.BindCM(addr)
	if err != nil {
		return nil, fmt.Errorf("rdma_cm listener on %s (%s): %w", addr, why, err)
	}
	if devName = lis.ID.DeviceName(); s.cfg.Device != "" && devName != s.cfg.Device {
		lis.Close()
		return nil, fmt.Errorf("rdma_cm address %s belongs to %s, not to the server's --device %s", addr, devName, s.cfg.Device)
	}
	name, port, _ := endpoint.CMBinding(s.cfg.Device, s.cfg.Port, devName, lis.ID.Port()) // the CM ID's port, not --ib-port
	dev, err := s.cmDevice(name, port)
	if err != nil {
		lis.Close()
		return nil, err
	}
	eps, err := endpoint.NewTest(dev, spec, false)
	if err != nil {
		lis.Close()
		return nil, err
	}
	eps.Lis = lis
	lis.Log = s.log
	defer func() {
		if err != nil {
			eps.Close()
		}
	}()
	all := eps.All()
	if err := lis.Listen(dev, len(all)); err != nil {
		return nil, err
	}
	info := eps.Info()
	info.CMAddr, info.CMPort, info.CMToken = lis.Addr.Addr().String(), int(lis.Addr.Port()), lis.Token[:]
	if err := c.Send(proto.MsgQPInfo, info); err != nil {
		return nil, err
	}
	s.log.Printf("rdma_cm: listening on %s (%s), device %s port %d, %d QPs", lis.Addr, why, devName, dev.Port.Port, len(all))
	abort := make(chan struct{})
	accepted := make(chan error, 1)
	go func() {
		accepted <- lis.AcceptAll(dev, all, time.Now().Add(endpoint.CMTimeout*time.Duration(2+len(all))), abort)
	}()
	// the client's buffers come once its QPs are connected, or its error
	var remote proto.QPInfo
	got := make(chan error, 1)
	go func() { got <- c.RecvTimeout(proto.MsgQPInfo, &remote, endpoint.CMTimeout*time.Duration(3+len(all))) }()
	select {
	case err := <-accepted:
		if err != nil { // the client's connect fails too: take its message
			<-got
			return nil, err
		}
		if err := <-got; err != nil {
			return nil, err
		}
	case err := <-got:
		if err != nil {
			close(abort)
			<-accepted
			return nil, err
		}
		if err := <-accepted; err != nil {
			return nil, err
		}
	}
	if err := eps.StartCM(remote); err != nil {
		return nil, err
	}
	return eps, nil
}
