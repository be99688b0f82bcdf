package server

import (
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
// client's QP numbers and PSNs, then the server's (endpoint.AcceptExchange).
// The endpoints are closed on an error.
func connectExchange(c ctrl.Chan, dev *device.Device, spec spec.Spec) (*endpoint.Test, error) {
	// The client sends its QP info right after the test: read it first, so a
	// failure below leaves the session in step for the next test.
	var remote proto.QPInfo
	if err := c.Recv(proto.MsgQPInfo, &remote); err != nil {
		return nil, err
	}
	eps, err := endpoint.AcceptExchange(dev, spec, remote, !device.IsLocalAddr(admit.AddrOf(c.RemoteAddr())))
	if err != nil {
		return nil, err
	}
	if err := c.Send(proto.MsgQPInfo, eps.Info()); err != nil {
		eps.Close()
		return nil, err
	}
	return eps, nil
}

// connectCM is the server side of an rdma_cm connection (endpoint.AcceptCM):
// it tells the client where it listens, and takes the client's buffers once
// its QPs are connected.
func (s *Server) connectCM(c ctrl.Chan, spec spec.Spec) (*endpoint.Test, error) {
	at := endpoint.CMSite{Device: s.cfg.Device, Port: s.cfg.Port, Local: admit.AddrOf(c.LocalAddr()), Open: s.cmDevice, Log: s.log}
	announce := func(info proto.QPInfo) error { return c.Send(proto.MsgQPInfo, info) }
	recv := func(timeout time.Duration) (proto.QPInfo, error) {
		var remote proto.QPInfo
		err := c.RecvTimeout(proto.MsgQPInfo, &remote, timeout)
		return remote, err
	}
	return endpoint.AcceptCM(spec, at, announce, recv)
}
