package bench

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/server"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// onceServer serves server.Config{Once: true} on an ephemeral loopback port;
// the channel gets Serve's return.
func onceServer(t *testing.T) (string, <-chan error) {
	t.Helper()
	srv, err := server.New(server.Config{GIDIndex: -1, Port: 1, Log: testLog(t), Once: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	return ln.Addr().String(), done
}

// TestServeOnce: with --once the server outlives connections that run no
// test, then ends when the first session that ran one ends: nil after
// passed tests, the failure after a failed one. TCP tests: no RDMA needed.
func TestServeOnce(t *testing.T) {
	spec := tcpSpecs(t, spec.Plan{Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 50, Warmup: -1}})[0]
	dial := func(t *testing.T, addr string) *Client {
		cl, err := Dial(context.Background(), addr, ClientConfig{Port: 1, GIDIndex: -1, Transport: result.TransportTCP}, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	wait := func(t *testing.T, done <-chan error) error {
		t.Helper()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return 10 s after the session ended")
			return nil
		}
	}
	t.Run("passed", func(t *testing.T) {
		addr, done := onceServer(t)
		nc, err := net.Dial("tcp", addr) // no handshake: does not count
		if err != nil {
			t.Fatal(err)
		}
		nc.Close()
		idle := dial(t, addr) // a session without a test: does not count
		idle.Close()
		select {
		case err := <-done:
			t.Fatalf("Serve returned before any test: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		cl := dial(t, addr)
		if _, err := cl.Run(context.Background(), spec, measure.Options{CPU: -1}); err != nil {
			t.Fatal(err)
		}
		cl.Close()
		if err := wait(t, done); err != nil {
			t.Errorf("Serve after a passed session: %v, want nil", err)
		}
	})
	t.Run("failed", func(t *testing.T) {
		addr, done := onceServer(t)
		cl := dial(t, addr)
		bad := spec
		bad.Op = "bogus"
		if err := cl.c.Send(proto.MsgTest, bad); err != nil {
			t.Fatal(err)
		}
		if err := cl.c.Send(proto.MsgQPInfo, proto.QPInfo{}); err != nil { // the server reads it to stay in step
			t.Fatal(err)
		}
		cl.c.RecvAny(5 * time.Second) // the refusal
		cl.Close()
		err := wait(t, done)
		if err == nil || !strings.Contains(err.Error(), "bad test") {
			t.Errorf("Serve after a bad test: %v, want the bad test named", err)
		}
	})
}
