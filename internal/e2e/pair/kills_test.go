package pair

import (
	"context"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The kill and stop cases of either side, mid-test, across the wire. They
// wait on deadlines (about a minute in all); the fault suite
// (internal/e2e/faults) covers the same on one host.

// next is the client after a fault: it must be served.
var next = []string{"--op", "send", "--mode", "lat", "-n", "50", "--connect-timeout", "40s"}

// victim starts a long client of mode args against the peer and waits
// until it measures.
func (b *bed) victim(t *testing.T, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	p := b.start(t, ctx, "victim client", append(append([]string{"run", b.peer.Addr}, args...), "-D", "60s", "--interval", "200ms")...)
	if err := p.WaitOutput(measuring, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	return p
}

// serveNext runs the next client against the peer: it must succeed.
func (b *bed) serveNext(t *testing.T, after string) time.Duration {
	t.Helper()
	code, out, took := b.run(t, 90*time.Second, append([]string{"run", b.peer.Addr}, next...)...)
	if code != 0 {
		t.Fatalf("the next client %s: exit %d after %v; output:\n%s", after, code, took.Round(time.Millisecond), indent(out))
	}
	return took
}

// serverLines are the server's lines about its clients' ends.
func serverLines(s *server) string {
	var ls []string
	for _, l := range strings.Split(s.Output(), "\n") {
		if regexp.MustCompile(`client|lost|heartbeat|silent|cannot talk`).MatchString(l) {
			ls = append(ls, l)
		}
	}
	if len(ls) > 12 {
		ls = ls[len(ls)-12:]
	}
	return strings.Join(ls, "\n")
}

// TestClientKilled: the client killed mid-test; the server serves the next.
func TestClientKilled(t *testing.T) {
	b := newBed(t)
	srv := b.startServer(t)
	v := b.victim(t, "--op", "send", "--mode", "lat")
	v.Signal(syscall.SIGKILL)
	if code := v.Wait(10 * time.Second); code == -1 {
		t.Fatal("the killed client did not end within 10 s")
	}
	took := b.serveNext(t, "after a killed one")
	if srv.Exited() {
		t.Fatalf("the server died")
	}
	t.Logf("next client done %v after its start; the server:\n%s", took.Round(time.Millisecond), indent(serverLines(srv)))
}

// TestClientStopped: the client stopped mid-test; the server drops it at
// its heartbeat deadline and serves the next client (which retries 'busy'
// meanwhile), all within 40 s of the stop.
func TestClientStopped(t *testing.T) {
	b := newBed(t)
	srv := b.startServer(t)
	v := b.victim(t, "--op", "write", "--mode", "bw")
	v.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	b.serveNext(t, "while one is stopped")
	held := time.Since(stopped)
	v.Signal(syscall.SIGKILL)
	v.Signal(syscall.SIGCONT)
	if held > 40*time.Second {
		t.Errorf("the stopped client held the server for %v (limit 40 s)", held.Round(time.Millisecond))
	}
	if srv.Exited() {
		t.Fatalf("the server died")
	}
	t.Logf("next client done %v after the stop; the server:\n%s", held.Round(time.Millisecond), indent(serverLines(srv)))
}

// serverFault: the server gets sig mid-test; the client ends with an error
// within 45 s, saying so clearly.
func (b *bed) serverFault(t *testing.T, srv *server, sig syscall.Signal) {
	t.Helper()
	v := b.victim(t, "--op", "send", "--mode", "lat")
	if err := srv.cmd.Signal(sig); err != nil {
		t.Fatalf("signal %v to the server on %s: %v", sig, b.peer.Name, err)
	}
	at := time.Now()
	code := v.Wait(60 * time.Second)
	took := time.Since(at)
	out := v.Output()
	switch {
	case code == -1:
		t.Fatalf("the client still runs %v after the server's %v; output:\n%s", took.Round(time.Millisecond), sig, indent(out))
	case code == 0:
		t.Fatalf("client exit 0 after the server's %v; output:\n%s", sig, indent(out))
	case took > 45*time.Second:
		t.Errorf("the client took %v to give up after the server's %v (limit 45 s)", took.Round(time.Millisecond), sig)
	}
	if !regexp.MustCompile(`(?i)peer|control|closed|no progress|timeout|reset`).MatchString(out) {
		t.Errorf("the client's error after the server's %v is not clear; output:\n%s", sig, indent(out))
	}
	tail := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(tail) > 2 {
		tail = tail[len(tail)-2:]
	}
	t.Logf("client exit %d %v after the server's %v:\n%s", code, took.Round(time.Millisecond), sig, indent(strings.Join(tail, "\n")))
}

// TestServerKilled: the server killed mid-test; the client ends with an
// error, and a restarted server serves the next client.
func TestServerKilled(t *testing.T) {
	b := newBed(t)
	srv := b.startServer(t)
	b.serverFault(t, srv, syscall.SIGKILL)
	select {
	case <-srv.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the killed server has not ended after 10 s")
	}
	b.startServer(t)
	b.serveNext(t, "after the server's SIGKILL (restarted)")
}

// TestServerStopped: the server stopped mid-test; the client ends with an
// error, and the server, continued, serves the next client and lives on.
func TestServerStopped(t *testing.T) {
	b := newBed(t)
	srv := b.startServer(t)
	b.serverFault(t, srv, syscall.SIGSTOP)
	if err := srv.cmd.Signal(syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT to the server: %v", err)
	}
	b.serveNext(t, "after the server's SIGSTOP (continued)")
	if srv.Exited() {
		t.Fatalf("the server died after being stopped and continued; output:\n%s", indent(srv.Output()))
	}
}
