package server

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/admit"
	"github.com/rdmabench/rdmabench/bench/auth"
	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testutil/logbuf"
	"github.com/rdmabench/rdmabench/internal/testutil/peerln"
)

// testServer is a Server without a device (TCP tests only), whose log
// goes to the returned buffer.
func testServer(t *testing.T, cfg Config) (*Server, *logbuf.Buf) {
	t.Helper()
	lb := &logbuf.Buf{}
	cfg.Log = log.New(lb, "", 0)
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	return &Server{cfg: cfg, log: cfg.Log}, lb
}

// serve runs srv on ln until the test ends; it checks that Serve returns.
func serve(t *testing.T, srv *Server, ln net.Listener) {
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

// TestAdmission: protected mode and --allow, end to end over the handshake.
func TestAdmission(t *testing.T) {
	key := []byte("0123456789abcdef")
	allow, _ := admit.ParseAllow("10.0.0.0/8, 127.0.0.1")
	for _, tc := range []struct {
		name      string
		cfg       Config
		peer      string
		clientKey []byte
		want      string // a RemoteError code; "" admitted
		mention   []string
	}{
		{"protected: loopback", Config{}, "127.0.0.5:4000", nil, "", nil},
		{"protected: ipv6 loopback", Config{}, "[::1]:4000", nil, "", nil},
		{"protected: other", Config{}, "192.0.2.1:4000", nil, codeProtected, []string{"protected mode", "192.0.2.1", "--bind ADDR", "--auth-key-file FILE"}},
		{"exposed (--bind)", Config{Exposed: true}, "192.0.2.1:4000", nil, "", nil},
		{"key opens it", Config{AuthKey: key}, "192.0.2.1:4000", key, "", nil},
		{"allow: in", Config{Exposed: true, Allow: allow}, "10.9.8.7:4000", nil, "", nil},
		{"allow: out", Config{Exposed: true, Allow: allow}, "192.0.2.1:4000", nil, codeNotAllowed, []string{"192.0.2.1 is not in the server's --allow list"}},
		{"allow: loopback not listed", Config{Allow: allow}, "127.0.0.2:4000", nil, codeNotAllowed, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, lb := testServer(t, tc.cfg)
			ln := peerln.Listen(t, tc.peer)
			serve(t, srv, ln)
			c := ln.Dial(t)
			defer c.Close()
			_, err := auth.ClientHandshake(c, tc.clientKey, "test", ctrl.MsgTimeout)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v\n%s", err, lb)
				}
				return
			}
			var re *proto.RemoteError
			if !errors.As(err, &re) || re.Code != tc.want {
				t.Fatalf("handshake: %v, want a refusal with code %q", err, tc.want)
			}
			for _, m := range tc.mention {
				if !strings.Contains(re.Msg, m) {
					t.Errorf("refusal %q lacks %q", re.Msg, m)
				}
			}
			lb.Wait(t, "refused ("+tc.want+")")
		})
	}
}

// TestIdlePeerHoldsNothing: a peer that said hello and went quiet takes no
// lock (the next client gets in) and is closed at the idle timeout.
func TestIdlePeerHoldsNothing(t *testing.T) {
	srv, lb := testServer(t, Config{IdleTimeout: 300 * time.Millisecond})
	ln := peerln.Listen(t, "127.0.0.1:1000")
	serve(t, srv, ln)
	idle := ln.Dial(t)
	if _, err := auth.ClientHandshake(idle, nil, "idle", ctrl.MsgTimeout); err != nil {
		t.Fatal(err)
	}
	next := ln.Dial(t)
	if _, err := auth.ClientHandshake(next, nil, "next", ctrl.MsgTimeout); err != nil {
		t.Fatalf("a second client after an idle one: %v", err)
	}
	if srv.busy.Load() {
		t.Fatal("busy without a test")
	}
	start := time.Now()
	_, _, err := idle.RecvAny(2 * time.Second)
	var re *proto.RemoteError
	if !errors.As(err, &re) || !strings.Contains(re.Msg, "idle for 300ms between tests (server --idle-timeout)") {
		t.Fatalf("idle peer got %v, want the idle-timeout error", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("idle peer closed after %v, want about 300ms", d)
	}
	lb.Wait(t, "idle for 300ms")
}

// TestBusyAtFirstTest: the busy lock is taken at the first test, and a
// second session's first test (or hello) is refused while it is held.
func TestBusyAtFirstTest(t *testing.T) {
	srv, _ := testServer(t, Config{})
	ln := peerln.Listen(t, "127.0.0.1:1000")
	serve(t, srv, ln)
	first := ln.Dial(t)
	second := ln.Dial(t)
	for _, c := range []*proto.Conn{first, second} {
		if _, err := auth.ClientHandshake(c, nil, "x", ctrl.MsgTimeout); err != nil {
			t.Fatal(err)
		}
	}
	// first's test takes the lock (and then waits for its QP info)
	if err := first.Send(proto.MsgTest, spec.Spec{Op: "send", Mode: "lat", Size: 8, Iters: 10, Transport: "tcp"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Second); !srv.busy.Load(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first test took no lock")
		}
	}
	if err := second.Send(proto.MsgTest, spec.Spec{}); err != nil {
		t.Fatal(err)
	}
	_, _, err := second.RecvAny(2 * time.Second)
	var re *proto.RemoteError
	if !errors.As(err, &re) || re.Code != admit.CodeBusy {
		t.Fatalf("second session's test: %v, want busy", err)
	}
	third := ln.Dial(t)
	if _, err := auth.ClientHandshake(third, nil, "x", ctrl.MsgTimeout); !errors.As(err, &re) || re.Code != admit.CodeBusy {
		t.Fatalf("hello while busy: %v, want busy", err)
	}
	first.Close()
	for deadline := time.Now().Add(2 * time.Second); srv.busy.Load(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lock outlived its session")
		}
	}
}

// TestHandshakeLimits: a trickling peer is closed at the handshake
// deadline, and a connection past the per-address cap is refused at once
// with the reason (not closed with EOF).
func TestHandshakeLimits(t *testing.T) {
	defer func(d time.Duration) { handshakeTimeout = d }(handshakeTimeout)
	handshakeTimeout = 500 * time.Millisecond
	srv, lb := testServer(t, Config{MaxStartups: 3, MaxStartupsPerAddr: 3})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(t, srv, ln)
	var slow []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("RD")) // a header, trickled: never done
		slow = append(slow, c)
	}
	time.Sleep(100 * time.Millisecond)
	extra, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	pe := proto.NewConn(extra, 300*time.Millisecond)
	defer pe.Close()
	_, _, err = pe.RecvAny(300 * time.Millisecond)
	var re *proto.RemoteError
	if !errors.As(err, &re) || re.Code != admit.CodeTooMany || !strings.Contains(re.Msg, "3 connections from 127.0.0.1 are already in the handshake") ||
		!strings.Contains(re.Msg, "--max-startups-per-addr 3") {
		t.Errorf("connection past 3 from one address: %v, want refused at once with the reason", err)
	}
	lb.Wait(t, "refused (too-many)")
	start := time.Now()
	for _, c := range slow {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("trickling peer: %v, want closed", err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("trickling peers closed after %v, want the 500ms handshake deadline", d)
	}
	lb.Wait(t, "handshake not done within 500ms")
	// the slots are free again: a client gets in
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	pc := proto.NewConn(c, 2*time.Second)
	defer pc.Close()
	if _, err := auth.ClientHandshake(pc, nil, "x", ctrl.MsgTimeout); err != nil {
		t.Fatalf("client after the flood: %v", err)
	}
}

// serveLoopback runs srv on 127.0.0.1 until the test ends and returns its
// address.
func serveLoopback(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(t, srv, ln)
	return ln.Addr().String()
}

// dialFrom connects to addr from the loopback address src (the whole of
// 127/8 is loopback on Linux: each address is another source).
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, src, err)
	}
	return c
}

// TestIdleFloodNoLockout: 150 idle connections (connect, send nothing) from
// one address leave a client from another address served at once, and a
// client from the same address refused with the reason.
func TestIdleFloodNoLockout(t *testing.T) {
	srv, lb := testServer(t, Config{})
	addr := serveLoopback(t, srv)
	for range 150 {
		c := dialFrom(t, "127.0.0.2", addr)
		defer c.Close()
	}
	// the accept loop has seen them all when the table is full from .2
	for deadline := time.Now().Add(2 * time.Second); srv.inHandshake() < admit.DefaultMaxStartupsPerAddr; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections in the table, want %d", srv.inHandshake(), admit.DefaultMaxStartupsPerAddr)
		}
	}
	start := time.Now()
	other := proto.NewConn(dialFrom(t, "127.0.0.1", addr), 2*time.Second)
	defer other.Close()
	if _, err := auth.ClientHandshake(other, nil, "other", ctrl.MsgTimeout); err != nil {
		t.Fatalf("client from another address under 150 idle connections: %v\n%s", err, lb)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("client from another address served after %v, want at once", d)
	}
	same := proto.NewConn(dialFrom(t, "127.0.0.2", addr), 2*time.Second)
	defer same.Close()
	_, err := auth.ClientHandshake(same, nil, "same", ctrl.MsgTimeout)
	var re *proto.RemoteError
	if !errors.As(err, &re) || re.Code != admit.CodeTooMany || !strings.Contains(re.Msg, "from 127.0.0.2") {
		t.Fatalf("client from the flooding address: %v, want the per-address refusal", err)
	}
	lb.Wait(t, "refused (too-many)")
}

// TestDropOldestStartup: with the table full (from several addresses),
// a new connection gets in, and the oldest unauthenticated one is dropped
// with the reason.
func TestDropOldestStartup(t *testing.T) {
	srv, lb := testServer(t, Config{MaxStartups: 4, MaxStartupsPerAddr: 2})
	addr := serveLoopback(t, srv)
	var idle []*proto.Conn
	for _, src := range []string{"127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"} {
		c := proto.NewConn(dialFrom(t, src, addr), 2*time.Second)
		defer c.Close()
		idle = append(idle, c)
		for deadline := time.Now().Add(2 * time.Second); srv.inHandshake() < len(idle); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the accept loop did not take the connection")
			}
		}
	}
	c := proto.NewConn(dialFrom(t, "127.0.0.4", addr), 2*time.Second)
	defer c.Close()
	if _, err := auth.ClientHandshake(c, nil, "new", ctrl.MsgTimeout); err != nil {
		t.Fatalf("client with the table full: %v\n%s", err, lb)
	}
	_, _, err := idle[0].RecvAny(time.Second)
	var re *proto.RemoteError
	if !errors.As(err, &re) || re.Code != admit.CodeDropped || !strings.Contains(re.Msg, "--max-startups 4") {
		t.Fatalf("the oldest connection: %v, want dropped with the reason", err)
	}
	idle[1].SetTimeout(100 * time.Millisecond)
	if _, _, err := idle[1].RecvAny(100 * time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the second oldest: %v, want still waiting", err)
	}
	lb.Wait(t, "dropped after")
}

// flakyListener fails Accept with EMFILE n times, then delegates.
type flakyListener struct {
	net.Listener
	mu sync.Mutex
	n  int
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.n > 0 {
		l.n--
		l.mu.Unlock()
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: &osSyscallError{syscall.EMFILE}}
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

type osSyscallError struct{ err error }

func (e *osSyscallError) Error() string { return "accept4: " + e.err.Error() }
func (e *osSyscallError) Unwrap() error { return e.err }

// TestAcceptBackoff: the accept loop outlives EMFILE, logs it and serves.
func TestAcceptBackoff(t *testing.T) {
	srv, lb := testServer(t, Config{})
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(t, srv, &flakyListener{Listener: inner, n: 5})
	c, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	pc := proto.NewConn(c, 3*time.Second)
	defer pc.Close()
	if _, err := auth.ClientHandshake(pc, nil, "x", ctrl.MsgTimeout); err != nil {
		t.Fatalf("client after EMFILE: %v\n%s", err, lb)
	}
	lb.Wait(t, "accept4: too many open files; backing off")
}

// TestShutdownClosesSessions: when Serve's context ends, an open session is
// closed and Serve returns within the grace period.
func TestShutdownClosesSessions(t *testing.T) {
	srv, _ := testServer(t, Config{})
	ln := peerln.Listen(t, "127.0.0.1:1000")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	c := ln.Dial(t)
	if _, err := auth.ClientHandshake(c, nil, "x", ctrl.MsgTimeout); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Serve still running 2 s after its context ended")
	}
	if _, _, err := c.RecvAny(time.Second); err == nil || !errors.Is(err, io.EOF) {
		t.Errorf("session after shutdown: %v, want closed", err)
	}
	if d := time.Since(start); d > shutdownGrace {
		t.Errorf("shutdown took %v", d)
	}
}

// TestRefusalsBounded: refusals that wait for their peer to read them are
// bounded (--max-startups of them); the rest are written and closed at once,
// and every refused peer still gets the reason.
func TestRefusalsBounded(t *testing.T) {
	srv, _ := testServer(t, Config{MaxStartups: 2, MaxStartupsPerAddr: 1})
	addr := serveLoopback(t, srv)
	first := dialFrom(t, "127.0.0.2", addr) // holds the address's one startup
	defer first.Close()
	var refused []*proto.Conn
	for range 10 {
		c := proto.NewConn(dialFrom(t, "127.0.0.2", addr), 2*time.Second)
		defer c.Close()
		refused = append(refused, c)
	}
	for i, c := range refused {
		_, _, err := c.RecvAny(2 * time.Second)
		var re *proto.RemoteError
		if !errors.As(err, &re) || re.Code != admit.CodeTooMany {
			t.Fatalf("refused connection %d: %v, want the per-address refusal", i, err)
		}
	}
	srv.lis.mu.Lock()
	lingering := srv.lis.starts.Lingering()
	srv.lis.mu.Unlock()
	if n := lingering; n > 2 {
		t.Errorf("%d refusals lingering, want at most 2 (a quarter of --max-startups, at least 2)", n)
	}
}

// TestPerftestPeerLogged: a peer that opens with perftest's version string
// (a perftest tool, or the drop-in trying perftest's exchange first) is
// logged as such, not as a bad magic that tells the operator to run the
// drop-in.
func TestPerftestPeerLogged(t *testing.T) {
	srv, lb := testServer(t, Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(t, srv, ln)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v := make([]byte, 16) // perftest's raw version field
	copy(v, "6.30")
	if _, err := c.Write(append(v, make([]byte, 16)...)); err != nil {
		t.Fatal(err)
	}
	lb.Wait(t, `spoke perftest's exchange (version "6.30"), not rdmabench's: closed`)
	if strings.Contains(lb.String(), "run rdmabench's drop-in") {
		t.Errorf("the server log tells its operator to run the drop-in:\n%s", lb.String())
	}
}
