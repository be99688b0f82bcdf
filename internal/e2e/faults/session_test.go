package faults

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/bench/proto"
)

// Sessions that cannot hold the server: idle, slow, stopped and flooding
// peers, the session limit, and SIGTERM with a session open. The parallel
// cases come first so that they run as one batch (their time is deadline
// waits); the two floods, which lower the file limit, run alone after them.

func init() {
	register(
		Case{Group: "session", Name: "idle-peer-after-hello-no-lockout", Parallel: true, Run: func(t *Fx) error {
			srv, err := t.Server("--idle-timeout", "5s")
			if err != nil {
				return err
			}
			c, err := t.hello()
			if err != nil {
				return err
			}
			defer c.Close()
			start := time.Now()
			told := make(chan error, 1)
			go func() {
				_, _, err := c.RecvAny(20 * time.Second)
				var re *proto.RemoteError
				if !errors.As(err, &re) || !strings.Contains(re.Msg, "idle for 5s") {
					told <- fmt.Errorf("idle peer got %v, want the idle-timeout error", err)
				} else if d := time.Since(start); d < 4500*time.Millisecond || d > 7*time.Second { // start is after hello's round trip, the server's clock before it
					told <- fmt.Errorf("idle peer closed after %v, want 5 s (--idle-timeout)", d.Round(time.Millisecond))
				}
				close(told)
			}()
			// not locked out by the idle peer: served before it times out
			if err := t.Serves("--connect-timeout", "3s"); err != nil {
				return err
			}
			if err := <-told; err != nil {
				return err
			}
			return srv.WaitOutput("idle for 5s between tests", time.Second)
		}},
		Case{Group: "session", Name: "slowloris-handshake", Parallel: true, Run: func(t *Fx) error {
			srv, err := t.Server()
			if err != nil {
				return err
			}
			var conns []net.Conn
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			for range 3 {
				c, err := net.DialTimeout("tcp", t.Addr("127.0.0.1"), time.Second)
				if err != nil {
					return err
				}
				conns = append(conns, c)
			}
			start := time.Now()
			frame, _ := proto.AppendFrame(nil, proto.MsgHello, []byte(`{"version":2,"tool":"slow","host":"x"}`))
			closed := 0
			for i := 0; i < len(frame) && closed < len(conns); i++ { // one byte per 300 ms per connection
				for _, c := range conns {
					c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
					if _, err := c.Write(frame[i : i+1]); err != nil {
						closed++
					}
				}
				time.Sleep(300 * time.Millisecond)
				if time.Since(start) > 9*time.Second {
					break
				}
			}
			for _, c := range conns {
				c.SetReadDeadline(time.Now().Add(time.Second))
				if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
					return fmt.Errorf("a trickling peer still open after %v (want closed at the 5 s handshake deadline)", time.Since(start).Round(time.Millisecond))
				}
			}
			if d := time.Since(start); d > 8*time.Second {
				return fmt.Errorf("trickling peers closed after %v, want about 5 s", d)
			}
			if err := srv.WaitOutput("handshake not done within 5s", time.Second); err != nil {
				return err
			}
			c, err := t.hello() // and a new session gets in
			if err != nil {
				return err
			}
			return c.Close()
		}},
		Case{Group: "session", Name: "stopped-client-dropped", Parallel: true, Run: func(t *Fx) error {
			srv, err := t.Server()
			if err != nil {
				return err
			}
			// the TCP baseline (the same heartbeats); over RDMA, with every op
			// and mode after it: lockout/stopped-rdma-client-next-served
			victim, err := t.clientOn("stopped client", "127.0.0.1", t.port, modeArgs("tcp-lat")) // measuring: into the test
			if err != nil {
				return err
			}
			victim.Signal(syscall.SIGSTOP)
			// the server drops it at its heartbeat deadline (4 s), then serves the next
			if err := srv.WaitOutput("i/o timeout", 6*time.Second); err != nil {
				return fmt.Errorf("the stopped client was not dropped within the 4 s heartbeat deadline: %w", err)
			}
			return t.Serves("--connect-timeout", "20s")
		}},
		Case{Group: "session", Name: "max-session", Parallel: true, Run: func(t *Fx) error {
			srv, err := t.Server("--max-session", "4s")
			if err != nil {
				return err
			}
			start := time.Now()
			long, err := t.Start("long client", "run", "127.0.0.1", "-p", fmt.Sprint(t.port), "--op", "send", "--mode", "lat", "-D", "30s")
			if err != nil {
				return err
			}
			if err := srv.WaitOutput("session limit reached (server --max-session 4s)", 10*time.Second); err != nil {
				return err
			}
			if d := time.Since(start); d < 4*time.Second || d > 9*time.Second {
				return fmt.Errorf("session closed %v after the client started, want 4 s after its hello", d.Round(time.Millisecond))
			}
			long.Signal(syscall.SIGKILL) // what the client does next is not this case's concern
			// the lock is free: a new session's hello is not refused busy
			// (a whole run would take most of the 4 s limit under TCG)
			for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				c, err := t.hello()
				if err == nil {
					c.Close()
					return nil
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("a new session after the limit: %w", err)
				}
			}
		}},
		Case{Group: "session", Name: "sigterm-with-session-open", Parallel: true, Run: func(t *Fx) error {
			srv, err := t.Server()
			if err != nil {
				return err
			}
			if _, err := t.clientOn("long client", "127.0.0.1", t.port, modeArgs("write-bw")); err != nil { // measuring: into the test
				return err
			}
			srv.Signal(syscall.SIGTERM)
			code, took := srv.Wait(5 * time.Second)
			if code == -1 || took > 2*time.Second {
				return fmt.Errorf("server exit %d after %v of SIGTERM with a session open, want within 2 s:\n%s", code, took.Round(time.Millisecond), indent(srv.Output()))
			}
			if !strings.Contains(srv.Output(), "terminated: aborting") {
				return fmt.Errorf("the server did not log the signal:\n%s", indent(srv.Output()))
			}
			return nil
		}},
		Case{Group: "session", Name: "200-connections-ulimit-64", Run: func(t *Fx) error { return flood(t, false) }},
		Case{Group: "session", Name: "accept-emfile-backoff", Run: func(t *Fx) error { return flood(t, true) }},
	)
}

// hello opens a control session on this case's port (no key) and returns
// it after the hello-ack.
func (t *Fx) hello() (*proto.Conn, error) {
	nc, err := net.DialTimeout("tcp", t.Addr("127.0.0.1"), time.Second)
	if err != nil {
		return nil, err
	}
	c := proto.NewConn(nc, 5*time.Second)
	if err := c.Send(proto.MsgHello, proto.Hello{Version: proto.Version, Tool: "faults", Host: "idle"}); err != nil {
		c.Close()
		return nil, err
	}
	var ack proto.HelloAck
	if err := c.Recv(proto.MsgHelloAck, &ack); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// flood starts a server under `ulimit -n 64`, opens 200 connections at
// once (from 127.0.0.2), closes them and checks that it serves (127.0.0.1). With emfile, the server's
// limit is first lowered (prlimit) to just above what it has open, so that
// accept fails with EMFILE during the flood, and restored after.
func flood(t *Fx, emfile bool) error {
	srv, err := t.StartCmd("server", t.Command("sh", "-c", fmt.Sprintf("ulimit -n 64 && exec %s server -p %d", t.bin, t.port)))
	if err != nil {
		return err
	}
	if err := t.WaitListen("127.0.0.1", 10*time.Second); err != nil {
		return fmt.Errorf("server: %w; output:\n%s", err, srv.Output())
	}
	if emfile {
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", srv.pid()))
		if err != nil {
			return err
		}
		tight := unix.Rlimit{Cur: uint64(len(ents) + 3), Max: 64}
		if err := unix.Prlimit(srv.pid(), unix.RLIMIT_NOFILE, &tight, nil); err != nil {
			return fmt.Errorf("prlimit: %w", err)
		}
	}
	// from 127.0.0.2: what is still queued after the flood counts against
	// that address's startups, not against the session from 127.0.0.1 after it
	var conns []net.Conn
	from := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	var dialErr error
	for range 200 {
		c, err := from.Dial("tcp", t.Addr("127.0.0.1"))
		if err != nil {
			dialErr = err
			break // the backlog is full: enough
		}
		conns = append(conns, c)
	}
	// the server tells of the flood while the connections are open
	want := "refused (too-many)" // one address: past --max-startups-per-addr
	if emfile {
		want = "too many open files; backing off"
	}
	seen := srv.WaitOutput(want, 3*time.Second)
	if emfile {
		if err := unix.Prlimit(srv.pid(), unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 64, Max: 64}, nil); err != nil {
			return fmt.Errorf("prlimit: %w", err)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	if len(conns) < 100 {
		return fmt.Errorf("only %d of 200 connections opened (then: %v)", len(conns), dialErr)
	}
	if srv.Exited() {
		return fmt.Errorf("the server died under %d connections:\n%s", len(conns), indent(srv.Output()))
	}
	if seen != nil {
		return seen
	}
	// the closed connections still queued are drained (each one's
	// handshake ends at its EOF); until then a client may find every
	// handshake slot taken
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, err := t.hello()
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no session 5 s after the flood: %w", err)
		}
	}
	if emfile {
		return nil // a session got in; the ulimit case runs a whole client
	}
	return t.Serves("--connect-timeout", "10s")
}
