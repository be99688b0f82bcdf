package server

import (
	"encoding/json"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
)

// serveDoctor answers a session's doctor request with the checks of the
// session's device, and where the request asks (req.Ports) those of every
// port of the host in rail order.
func (s *Server) serveDoctor(c *proto.Conn, dev *device.Device, peer string, req proto.DoctorRequest) error {
	h, fs := device.Doctor(dev)
	var msg proto.Doctor
	msg.Host, _ = json.Marshal(h)
	msg.Findings, _ = json.Marshal(fs)
	worst := result.DoctorWorst(fs)
	if req.Ports {
		ports, err := device.DoctorRails()
		if err != nil {
			s.log.Printf("client %s: doctor: the host's ports: %v", peer, err)
		}
		if ports == nil {
			ports = []result.DoctorPort{}
		}
		lists := [][]result.DoctorFinding{fs}
		for _, p := range ports {
			lists = append(lists, p.Findings)
		}
		worst = result.DoctorWorst(lists...)
		msg.Ports, _ = json.Marshal(ports)
		s.log.Printf("client %s: doctor: %s (%d ports)", peer, worst, len(ports))
	} else {
		s.log.Printf("client %s: doctor: %s", peer, worst)
	}
	return c.Send(proto.MsgDoctor, msg)
}
