package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rdmabench/rdmabench/bench/admit"
	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/doctor"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/verbs"
)

// `rdmabench doctor` over verbs and the control connection: the active
// MTU that only ibv_query_port knows, the ports of this side, and the
// server's answer to a doctor request (bench/server's serveDoctor;
// bench/doctor does the checks).

// DoctorReport is what `rdmabench doctor` found: this host's facts and
// checks, and with a peer the server's and the comparison.
type DoctorReport struct {
	Local        result.DoctorHost
	Findings     []result.DoctorFinding // this host's, then with a peer the comparison's
	DeviceReason string                 // why this device was checked
	PeerAddress  string
	Peer         *result.DoctorHost
	PeerFindings []result.DoctorFinding
	// Ports are every port of this host, in rail order, when no device
	// was named; Local and Findings are then one of them (the first, or
	// with a peer the port by route). With a peer each carries the peer's
	// port it was paired with (Pairing says how).
	Ports   []result.DoctorPort
	Pairing string
}

// LocalDoctor checks this host for device name and port; name "" checks
// every port of every device, active or not, in rail order
// (device.RailPorts).
func LocalDoctor(name string, port int) DoctorReport {
	if name == "" {
		if ports, err := device.DoctorRails(); err == nil && len(ports) > 0 {
			return DoctorReport{Local: ports[0].Local, Findings: ports[0].Findings, Ports: ports,
				DeviceReason: fmt.Sprintf("every port of this host: %d, in rail order", len(ports))}
		}
	}
	return doctorOn(doctorDevice(name, port))
}

// doctorOn checks this host for device name ("": none) and port, chosen
// for reason why.
func doctorOn(name string, port int, why string) DoctorReport {
	r := DoctorReport{DeviceReason: why}
	if name == "" {
		r.Local, r.Findings = doctor.Run(device.DoctorInput(nil, port, ""))
		return r
	}
	r.Local, r.Findings = device.DoctorPort(name, port)
	return r
}

// doctorDevice names the device and port to check without a control
// connection, and why.
func doctorDevice(name string, port int) (string, int, string) {
	if name != "" {
		return name, port, "chosen with --ib-dev"
	}
	names, err := verbs.DeviceNames()
	if err != nil || len(names) == 0 {
		return "", port, "no RDMA device"
	}
	for _, n := range names {
		if device.PortActive(n, port) {
			return n, port, fmt.Sprintf("the first device whose port %d is active", port)
		}
	}
	return names[0], port, fmt.Sprintf("the first device (none has port %d active)", port)
}

// PeerDoctor checks this host and the server at addr, and compares both
// ends. This side's device is name, or by route of the control
// connection's address; the server checks the device it would test with.
// With name "" every port of this host is checked too, and compared with
// the server's port on the same rail where both hosts have as many ports
// (PairRails), else the port by route alone is compared.
func PeerDoctor(ctx context.Context, addr, name string, port int, key []byte, timeout time.Duration) (DoctorReport, error) {
	cl, err := Dial(ctx, addr, ClientConfig{Transport: result.TransportTCP, AuthKey: key}, timeout) // no device opened: a port that is down is a finding
	if err != nil {
		return DoctorReport{}, err
	}
	defer cl.Close()
	var r DoctorReport
	switch dname, dport, why, err := device.Choose(name, port, admit.AddrOf(cl.c.LocalAddr())); {
	case err == nil && dname != "":
		r = doctorOn(dname, dport, why)
	default: // no device by route: as without a peer
		r = doctorOn(doctorDevice(name, port))
	}
	if name == "" {
		r.Ports, _ = device.DoctorRails()
	}
	r.PeerAddress = addr
	// An older server ignores the request's payload and answers without
	// its ports.
	if err := cl.c.Send(proto.MsgDoctor, proto.DoctorRequest{Ports: len(r.Ports) > 0}); err != nil {
		return r, fmt.Errorf("doctor request to %s: %w", addr, err)
	}
	var msg proto.Doctor
	if err := cl.c.RecvTimeout(proto.MsgDoctor, &msg, ctrl.MsgTimeout); err != nil {
		var re *proto.RemoteError
		if !errors.As(err, &re) { // an older server closes the connection at an unknown message type
			return r, fmt.Errorf("doctor answer from %s (a server older than this rdmabench has none): %w", addr, err)
		}
		return r, fmt.Errorf("doctor answer from %s: %w", addr, err)
	}
	var peer result.DoctorHost
	if err := json.Unmarshal(msg.Host, &peer); err != nil {
		return r, fmt.Errorf("doctor answer from %s: host: %w", addr, err)
	}
	if err := json.Unmarshal(msg.Findings, &r.PeerFindings); err != nil {
		return r, fmt.Errorf("doctor answer from %s: findings: %w", addr, err)
	}
	var peerPorts []result.DoctorPort
	if len(msg.Ports) > 0 {
		if err := json.Unmarshal(msg.Ports, &peerPorts); err != nil {
			return r, fmt.Errorf("doctor answer from %s: ports: %w", addr, err)
		}
	}
	r.Peer = &peer
	r.Findings = append(r.Findings, doctor.Compare(r.Local, peer, addr)...)
	if len(r.Ports) > 0 {
		r.Pairing = doctor.PairRails(r.Ports, peerPorts, r.Local, peer, r.PeerFindings, addr)
	}
	return r, nil
}
