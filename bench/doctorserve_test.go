package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/doctor"
	"github.com/rdmabench/rdmabench/bench/proto"
)

// TestPeerDoctor: doctor HOST against a keyed server without a device
// gets the server's checks of its host and compares both ends.
func TestPeerDoctor(t *testing.T) {
	key := []byte("0123456789abcdef")
	srv, lb := testServer(t, ServerConfig{AuthKey: key})
	ln := listenAs(t, "127.0.0.1:4000")
	serve(t, srv, ln)
	r, err := PeerDoctor(context.Background(), ln.Addr().String(), "", 1, key, 2*time.Second)
	if err != nil {
		t.Fatalf("%v\n%s", err, lb)
	}
	if r.Peer == nil || r.Peer.Host == "" || len(r.PeerFindings) != len(doctor.Names())-4 {
		t.Fatalf("peer %+v, %d findings", r.Peer, len(r.PeerFindings))
	}
	var peerChecks []string
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Check, "peer-") {
			peerChecks = append(peerChecks, f.Check)
		}
	}
	if len(peerChecks) != 4 {
		t.Errorf("comparisons %v, want the 4 peer checks", peerChecks)
	}
	lb.waitLog(t, "doctor: ")
}

// TestDoctorNeedsHandshake: a doctor request in place of hello gets no
// answer, and a wrong key gets none either: the server checks nothing for
// a peer that has not authenticated.
func TestDoctorNeedsHandshake(t *testing.T) {
	key := []byte("0123456789abcdef")
	srv, lb := testServer(t, ServerConfig{AuthKey: key})
	ln := listenAs(t, "192.0.2.1:4000")
	serve(t, srv, ln)

	c := ln.dial(t)
	if err := c.Send(proto.MsgDoctor, nil); err != nil {
		t.Fatal(err)
	}
	var d proto.Doctor
	if err := c.Recv(proto.MsgDoctor, &d); err == nil {
		t.Fatalf("a doctor answer before the handshake: %s", d.Host)
	}
	c.Close()

	_, err := PeerDoctor(context.Background(), ln.Addr().String(), "", 1, []byte("another key, 16+"), 2*time.Second)
	if err == nil || !strings.Contains(err.Error(), "handshake") {
		t.Fatalf("a wrong key: %v, want a handshake failure", err)
	}
	time.Sleep(100 * time.Millisecond)
	if strings.Contains(lb.String(), "doctor: ") {
		t.Errorf("the server ran the doctor for an unauthenticated peer:\n%s", lb)
	}
}
