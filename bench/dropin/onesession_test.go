package dropin

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestOneSession: the drop-in server's listener takes one connection, stops
// listening, and ends (net.ErrClosed) once that connection is closed, or
// at Close.
func TestOneSession(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newOneSession(ln)
	go net.Dial("tcp", ln.Addr().String())
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if nc, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		nc.Close()
		t.Error("a second client connected")
	}
	next := make(chan error, 1)
	go func() { _, err := l.Accept(); next <- err }()
	select {
	case err := <-next:
		t.Fatalf("second Accept returned %v while the session is open", err)
	case <-time.After(50 * time.Millisecond):
	}
	c.Close()
	select {
	case err := <-next:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("after the session: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still blocked after the session closed")
	}
	l2 := newOneSession(listenLocal(t))
	l2.mu.Lock()
	l2.accepted = true
	l2.mu.Unlock()
	go func() { time.Sleep(20 * time.Millisecond); l2.Close() }()
	if _, err := l2.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// TestAcceptPeek: the first bytes are read, then read again through the
// connection; oneConn yields it once, then blocks until closed.
func TestAcceptPeek(t *testing.T) {
	ln := listenLocal(t)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			c.Write([]byte("6.06\x00rest"))
			c.Close()
		}
	}()
	c, first, err := acceptPeek(context.Background(), ln, 4, 5*time.Second)
	if err != nil || string(first) != "6.06" {
		t.Fatalf("acceptPeek: %q, %v", first, err)
	}
	all, _ := io.ReadAll(c)
	if string(all) != "6.06\x00rest" {
		t.Fatalf("read again: %q", all)
	}
	l := newOneConn(c, ln.Addr())
	if got, err := l.Accept(); err != nil || got != c {
		t.Fatalf("first Accept: %v %v", got, err)
	}
	go func() { time.Sleep(20 * time.Millisecond); l.Close() }()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second Accept: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := acceptPeek(ctx, listenLocal(t), 4, time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func listenLocal(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}
