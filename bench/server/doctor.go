package server

import (
	"encoding/json"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
)

// serveDoctor answers a session's doctor request with the checks of the
// session's device.
func (s *Server) serveDoctor(c *proto.Conn, dev *device.Device, peer string) error {
	h, fs := device.Doctor(dev)
	var msg proto.Doctor
	msg.Host, _ = json.Marshal(h)
	msg.Findings, _ = json.Marshal(fs)
	s.log.Printf("client %s: doctor: %s", peer, result.DoctorWorst(fs))
	return c.Send(proto.MsgDoctor, msg)
}
