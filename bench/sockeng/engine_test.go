package sockeng

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection, closed when the
// test ends.
func tcpPair(t *testing.T) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan *net.TCPConn, 1)
	go func() {
		c, _ := ln.AcceptTCP()
		accepted <- c
	}()
	client, err = net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	client.SetNoDelay(true)
	server.SetNoDelay(true)
	t.Cleanup(func() {
		client.Close()
		server.Close()
	})
	return client, server
}

func newEngine(t *testing.T, c *net.TCPConn, size int, timeout time.Duration) *Engine {
	t.Helper()
	g, err := NewEngine(c, Config{Size: size, Samples: 1 << 12, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// async runs f in a goroutine and returns its error on the channel.
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

func waitErr(t *testing.T, ch <-chan error, within time.Duration) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(within):
		t.Fatalf("loop did not return within %v", within)
		return nil
	}
}

func TestLatency(t *testing.T) {
	tests := []struct {
		size, iters int
		end         string // how the responder ends: "stop" (SetStop) or "close" (the client's EOF)
	}{
		{1, 2000, "stop"},
		{2, 2000, "close"},
		{64, 1000, "stop"},
		{4096, 1000, "close"},
		{65536, 200, "stop"},
		{1 << 20, 20, "close"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%dB-%s", tt.size, tt.end), func(t *testing.T) {
			cc, sc := tcpPair(t)
			cli, srv := newEngine(t, cc, tt.size, 5*time.Second), newEngine(t, sc, tt.size, 5*time.Second)
			done := async(srv.LatServer)
			var sum, n uint64
			for left := tt.iters; left > 0; {
				k := min(left, cli.Capacity())
				cli.ResetSamples()
				if err := cli.LatClient(k); err != nil {
					t.Fatal(err)
				}
				s := cli.Samples()
				if len(s) != k {
					t.Fatalf("%d samples after %d iterations", len(s), k)
				}
				for _, v := range s {
					if v == 0 || v > uint64(10*time.Second) { // garbage, not a stalled guest (a loaded TCG host stalls for seconds)
						t.Fatalf("round trip %d ns out of range", v)
					}
					sum += v
					n++
				}
				left -= k
			}
			if tt.end == "stop" {
				srv.SetStop(int64(tt.iters))
				if err := waitErr(t, done, 2*time.Second); err != nil {
					t.Fatalf("responder after SetStop: %v", err)
				}
			} else {
				cc.CloseWrite()
				err := waitErr(t, done, 2*time.Second)
				var pc *PeerClosedError
				if !errors.As(err, &pc) || !pc.Boundary || !errors.Is(err, ErrPeerClosed) || errors.Is(err, io.EOF) {
					t.Fatalf("responder after the client's close: %v, want a PeerClosedError at a boundary", err)
				}
			}
			if got := srv.Iterations(); got != uint64(tt.iters) || cli.Iterations() != uint64(tt.iters) {
				t.Fatalf("responder %d, client %d iterations, want %d", got, cli.Iterations(), tt.iters)
			}
			t.Logf("%d B: mean RTT %.1f us", tt.size, float64(sum)/float64(n)/1e3)
		})
	}
}

// bwSend writes a whole counted phase, draining the sample buffer when full.
func bwSend(t *testing.T, g *Engine, msgs uint64) {
	t.Helper()
	if err := g.BWPhase(msgs); err != nil {
		t.Fatal(err)
	}
	for g.Written() < msgs {
		g.ResetSamples()
		if _, err := g.BWClient(math.MaxInt64); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.BWFinish(); err != nil {
		t.Fatal(err)
	}
}

func TestBandwidth(t *testing.T) {
	tests := []struct {
		size       int
		warm, meas uint64 // messages; meas 0: an open-ended phase of about 50 ms
	}{
		{1, 100, 0},
		{64, 10, 10000},
		{4096, 0, 0},
		{65536, 64, 500},
		{1 << 20, 2, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%dB-%d", tt.size, tt.meas), func(t *testing.T) {
			cc, sc := tcpPair(t)
			cli, srv := newEngine(t, cc, tt.size, 5*time.Second), newEngine(t, sc, tt.size, 5*time.Second)
			done := async(srv.BWServer)
			if tt.warm > 0 {
				bwSend(t, cli, tt.warm)
				if srv.Received() != tt.warm*uint64(tt.size) {
					t.Fatalf("receiver has %d bytes after the acknowledged warm-up of %d messages", srv.Received(), tt.warm)
				}
			}
			var sent uint64
			if tt.meas > 0 {
				bwSend(t, cli, tt.meas)
				sent = tt.meas
				cc.CloseWrite() // the stream ends between phases
			} else {
				if err := cli.BWPhase(OpenEnded); err != nil {
					t.Fatal(err)
				}
				until := Now() + int64(50*time.Millisecond)
				for Now() < until {
					cli.ResetSamples()
					if _, err := cli.BWClient(until); err != nil {
						t.Fatal(err)
					}
				}
				sent = cli.Written()
				if err := cli.BWFinish(); err != nil {
					t.Fatal(err)
				}
			}
			if err := waitErr(t, done, 2*time.Second); err != nil {
				t.Fatalf("receiver: %v", err)
			}
			first, last := cli.Span()
			want := (tt.warm + sent) * uint64(tt.size)
			if srv.Received() != want || srv.Iterations() != tt.warm+sent || first <= 0 || last <= first {
				t.Fatalf("receiver got %d bytes / %d messages, want %d / %d; span %d..%d", srv.Received(), srv.Iterations(),
					want, tt.warm+sent, first, last)
			}
			t.Logf("%d B: %d messages in %v: %.0f MB/s", tt.size, sent, time.Duration(last-first),
				float64(sent)*float64(tt.size)/float64(last-first)*1e3)
		})
	}
}

// TestFailures: a peer that stops responding (timeout), Abort, a peer
// that closes, and a peer that breaks the stream format.
func TestFailures(t *testing.T) {
	const short = 300 * time.Millisecond
	tests := []struct {
		name    string
		timeout time.Duration
		run     func(t *testing.T, g *Engine, peer *net.TCPConn) error
		want    error // errors.Is target
		within  time.Duration
	}{
		{"lat client, silent server", short, func(t *testing.T, g *Engine, _ *net.TCPConn) error {
			return g.LatClient(1)
		}, ErrTimeout, 2 * time.Second},
		{"lat server, silent client", short, func(t *testing.T, g *Engine, _ *net.TCPConn) error {
			return g.LatServer()
		}, ErrTimeout, 2 * time.Second},
		{"bw sender, receiver stops reading", short, func(t *testing.T, g *Engine, _ *net.TCPConn) error {
			if err := g.BWPhase(OpenEnded); err != nil {
				return err
			}
			for {
				g.ResetSamples()
				if _, err := g.BWClient(math.MaxInt64); err != nil {
					return err
				}
			}
		}, ErrTimeout, 5 * time.Second},
		{"bw receiver, sender stops after the header", short, func(t *testing.T, g *Engine, peer *net.TCPConn) error {
			peer.Write([]byte{10, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3})
			return g.BWServer()
		}, ErrTimeout, 2 * time.Second},
		{"lat client aborted", 10 * time.Second, func(t *testing.T, g *Engine, _ *net.TCPConn) error {
			time.AfterFunc(150*time.Millisecond, g.Abort)
			return g.LatClient(1)
		}, ErrAborted, time.Second},
		{"lat server aborted", 10 * time.Second, func(t *testing.T, g *Engine, _ *net.TCPConn) error {
			time.AfterFunc(150*time.Millisecond, g.Abort)
			return g.LatServer()
		}, ErrAborted, time.Second},
		{"bw receiver aborted", 10 * time.Second, func(t *testing.T, g *Engine, _ *net.TCPConn) error {
			time.AfterFunc(150*time.Millisecond, g.Abort)
			return g.BWServer()
		}, ErrAborted, time.Second},
		{"lat client, server closes", short, func(t *testing.T, g *Engine, peer *net.TCPConn) error {
			peer.Close()
			err := g.LatClient(1)
			var pc *PeerClosedError
			if errors.As(err, &pc) && pc.Boundary {
				t.Errorf("client EOF marked as a boundary: %v", err)
			}
			return err
		}, ErrPeerClosed, 2 * time.Second},
		{"lat server, client closes mid-message", short, func(t *testing.T, g *Engine, peer *net.TCPConn) error {
			peer.Write([]byte{1, 2, 3})
			peer.CloseWrite()
			err := g.LatServer()
			var pc *PeerClosedError
			if !errors.As(err, &pc) || pc.Boundary || pc.Got != 3 || pc.Want != 64 {
				t.Errorf("mid-message EOF: %#v", pc)
			}
			return err
		}, ErrPeerClosed, 2 * time.Second},
		{"bw receiver, sender closes mid-phase", short, func(t *testing.T, g *Engine, peer *net.TCPConn) error {
			peer.Write(append([]byte{10, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 3*64)...))
			peer.CloseWrite()
			err := g.BWServer()
			var pc *PeerClosedError
			if !errors.As(err, &pc) || pc.Got != 3*64 || pc.Want != 10*64 {
				t.Errorf("mid-phase EOF: %#v", pc)
			}
			return err
		}, ErrPeerClosed, 2 * time.Second},
		{"bw sender, wrong acknowledgement", short, func(t *testing.T, g *Engine, peer *net.TCPConn) error {
			go func() {
				io.CopyN(io.Discard, peer, 8+2*64)
				peer.Write([]byte{0})
			}()
			if err := g.BWPhase(2); err != nil {
				return err
			}
			if _, err := g.BWClient(math.MaxInt64); err != nil {
				return err
			}
			err := g.BWFinish()
			if err == nil || errors.Is(err, ErrTimeout) {
				return err
			}
			return nil // a framing error
		}, nil, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc, sc := tcpPair(t)
			g := newEngine(t, cc, 64, tt.timeout)
			start := time.Now()
			err := waitErr(t, async(func() error { return tt.run(t, g, sc) }), tt.within)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("got %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if tt.want == ErrTimeout && time.Since(start) < tt.timeout {
				t.Errorf("timed out after %v, before the %v timeout", time.Since(start), tt.timeout)
			}
			t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
		})
	}
}

func TestBadInputs(t *testing.T) {
	cc, _ := tcpPair(t)
	for _, cfg := range []Config{{Size: 0, Samples: 16}, {Size: maxSize + 1, Samples: 16}, {Size: 8, Samples: 8}} {
		if g, err := NewEngine(cc, cfg); err == nil {
			g.Close()
			t.Errorf("NewEngine(%+v) accepted", cfg)
		}
	}
	if _, err := NewEngine(nil, Config{Size: 8, Samples: 16}); err == nil {
		t.Error("NewEngine(nil) accepted")
	}
	g := newEngine(t, cc, 8, time.Second)
	if err := g.LatClient(g.Capacity() + 1); err == nil {
		t.Error("LatClient beyond the sample buffer accepted")
	}
	if err := g.BWPhase(0); err == nil {
		t.Error("empty phase accepted")
	}
	if err := g.BWPhase(5); err != nil {
		t.Fatal(err)
	}
	if err := g.BWFinish(); err == nil {
		t.Error("BWFinish of an incomplete counted phase accepted")
	}
	if err := g.Close(); err != nil || g.Close() != nil {
		t.Error("Close is not idempotent")
	}
	if err := (*Engine)(nil).Close(); err != nil {
		t.Errorf("(*Engine)(nil).Close() = %v, want nil", err)
	}
}

// TestCloseWhileRunning: Close aborts a running loop and waits for it before
// it frees the engine; afterwards the accessors read zeros and loops fail
// (a test that gave up on a loop closes the engine under it).
func TestCloseWhileRunning(t *testing.T) {
	_, sc := tcpPair(t)
	g, err := NewEngine(sc, Config{Size: 64, Samples: 16, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	done := async(func() error {
		err := g.LatServer() // the peer sends nothing: it waits until aborted
		g.Iterations()       // what the error path reads
		return err
	})
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v", d)
	}
	if err := waitErr(t, done, time.Second); !errors.Is(err, ErrAborted) {
		t.Errorf("loop under Close: %v, want ErrAborted", err)
	}
	if g.Iterations() != 0 || g.Written() != 0 || g.Received() != 0 || g.Samples() != nil || g.Capacity() != 0 {
		t.Error("accessors after Close are not zero")
	}
	if f, l := g.Span(); f != 0 || l != 0 {
		t.Error("Span after Close is not zero")
	}
	g.ResetSamples()
	g.SetStop(1)
	g.Abort()
	if err := g.LatServer(); err == nil {
		t.Error("a loop after Close ran")
	}
	if _, err := g.BWClient(0); err == nil {
		t.Error("BWClient after Close ran")
	}
}
