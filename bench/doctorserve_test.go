package bench

import (
	"context"
	"encoding/json"
	"log"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/doctor"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/server"
	"github.com/rdmabench/rdmabench/internal/testutil/logbuf"
	"github.com/rdmabench/rdmabench/internal/testutil/peerln"
)

// TestPeerDoctor: doctor HOST against a keyed server without a device
// gets the server's checks of its host and compares both ends.
func TestPeerDoctor(t *testing.T) {
	key := []byte("0123456789abcdef")
	srv, lb := doctorServer(t, key)
	ln := peerln.Listen(t, "127.0.0.1:4000")
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
	lb.Wait(t, "doctor: ")
}

// TestDoctorNeedsHandshake: a doctor request in place of hello gets no
// answer, and a wrong key gets none either: the server checks nothing for
// a peer that has not authenticated.
func TestDoctorNeedsHandshake(t *testing.T) {
	key := []byte("0123456789abcdef")
	srv, lb := doctorServer(t, key)
	ln := peerln.Listen(t, "192.0.2.1:4000")
	serve(t, srv, ln)

	c := ln.Dial(t)
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

// doctorServer is a server holding key without a device (TCP tests only),
// whose log goes to the returned buffer.
func doctorServer(t *testing.T, key []byte) (*server.Server, *logbuf.Buf) {
	t.Helper()
	lb := &logbuf.Buf{}
	srv, err := server.New(server.Config{GIDIndex: -1, Port: 1, AuthKey: key, Log: log.New(lb, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, lb
}

// serve runs srv on ln until the test ends; it checks that Serve returns.
func serve(t *testing.T, srv *server.Server, ln net.Listener) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(3 * time.Second):
			t.Errorf("Serve did not return 3 s after its context ended")
		}
	})
}

// TestDoctorRequestPorts: a request without a payload (an older client)
// gets an answer without ports, which a decoder that refuses unknown
// members (as the older client's) takes; one asking for the ports gets
// them (none on a host without a device: an empty list).
func TestDoctorRequestPorts(t *testing.T) {
	key := []byte("0123456789abcdef")
	srv, lb := doctorServer(t, key)
	ln := peerln.Listen(t, "127.0.0.1:4000")
	serve(t, srv, ln)
	cl, err := Dial(context.Background(), ln.Addr().String(), ClientConfig{Transport: result.TransportTCP, AuthKey: key}, 2*time.Second)
	if err != nil {
		t.Fatalf("%v\n%s", err, lb)
	}
	defer cl.Close()
	// the answer as an older client reads it: host and findings only
	var old struct {
		Host     json.RawMessage `json:"host"`
		Findings json.RawMessage `json:"findings"`
	}
	if err := cl.c.Send(proto.MsgDoctor, nil); err != nil {
		t.Fatal(err)
	}
	if err := cl.c.RecvTimeout(proto.MsgDoctor, &old, 2*time.Second); err != nil {
		t.Fatalf("an older client's request: %v", err)
	}
	if err := cl.c.Send(proto.MsgDoctor, proto.DoctorRequest{Ports: true}); err != nil {
		t.Fatal(err)
	}
	var d proto.Doctor
	if err := cl.c.RecvTimeout(proto.MsgDoctor, &d, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if string(d.Ports) != "[]" {
		t.Errorf("ports %q, want [] (no device here)", d.Ports)
	}
	lb.Wait(t, "(0 ports)")
}
