package faults

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// No one host can lock the server out: idle connections from one address,
// a client stopped in the middle of an RDMA test, a server stopped in the
// middle of the --verify pass.

// idleFlood is the number of idle connections (connect, send nothing) a
// flooding address holds open.
const idleFlood = 150

// nextAll is the run of the client after a stopped one: every op and mode
// over RDMA, in one session.
var nextAll = []string{"--op", "send,write,read,fetch_add,cmp_swap", "--mode", "lat,bw", "-n", "100", "--connect-timeout", "30s"}

func init() {
	register(
		// serial first: the next client runs every op and mode, against a clock
		Case{Group: "lockout", Name: "stopped-rdma-client-next-served", Run: stoppedClients},
		// then a batch with numa's and session's parallel cases
		Case{Group: "lockout", Name: "idle-flood-150-per-address", Parallel: true, Run: idleFloodCase},
		Case{Group: "lockout", Name: "stop-server-in-verify", Parallel: true, Run: stopInVerify},
	)
}

// holdIdle opens n idle connections from the loopback address src to this
// case's port, and goes on opening two more every 50 ms, as a flood would
// (the server closes each after its 5 s handshake deadline), until the
// returned func is called; they all close when it is, or when the case ends.
func (t *Fx) holdIdle(src string, n int) (func(), error) {
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	var mu sync.Mutex
	var conns []net.Conn
	quit, done := make(chan struct{}), make(chan struct{})
	release := func() {
		select {
		case <-quit:
		default:
			close(quit)
			<-done
		}
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
		conns = nil
	}
	t.onCleanup(release)
	for range n {
		c, err := d.Dial("tcp", t.Addr("127.0.0.1"))
		if err != nil {
			close(done)
			release()
			return nil, fmt.Errorf("idle connection %d from %s: %w", len(conns)+1, src, err)
		}
		conns = append(conns, c)
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-time.After(50 * time.Millisecond):
			}
			for range 2 {
				if c, err := d.Dial("tcp", t.Addr("127.0.0.1")); err == nil {
					mu.Lock()
					conns = append(conns, c)
					mu.Unlock()
				}
			}
		}
	}()
	return release, nil
}

// idleFloodCase: with 150 idle connections from 127.0.0.2, an RDMA client
// from 127.0.0.1 is served at once; with 150 from 127.0.0.1, the next one
// from there is refused, told why (exit 4), not closed with EOF.
func idleFloodCase(t *Fx) error {
	srv, err := t.Server()
	if err != nil {
		return err
	}
	release, err := t.holdIdle("127.0.0.2", idleFlood)
	if err != nil {
		return err
	}
	start := time.Now()
	served := make(chan error, 1)
	go func() { served <- t.Serves("--connect-timeout", "3s") }()
	// at once: its hello is answered, not queued behind the idle ones (the
	// process's own start in a TCG guest takes most of this)
	if err := srv.WaitOutput("connected", 5*time.Second); err != nil {
		return fmt.Errorf("under %d idle connections from 127.0.0.2: %w", idleFlood, err)
	}
	took := time.Since(start)
	if err := <-served; err != nil {
		return fmt.Errorf("under %d idle connections from 127.0.0.2: %w", idleFlood, err)
	}
	release()
	if err := srv.WaitOutput("refused (too-many)", time.Second); err != nil {
		return err
	}
	if _, err := t.holdIdle("127.0.0.1", idleFlood); err != nil {
		return err
	}
	// (held until the case ends)
	if err := t.ExpectExit(4, 10*time.Second, []string{"connections from 127.0.0.1 are already in the handshake", "--max-startups-per-addr 8"},
		"run", "127.0.0.1", "-p", fmt.Sprint(t.Port()), "--op", "send", "--mode", "lat", "-n", "100", "--connect-timeout", "3s"); err != nil {
		return fmt.Errorf("a client from the flooding address: %w", err)
	}
	t.Logf("lockout: client from another address connected %v after its start, under %d idle connections", took.Round(time.Millisecond), idleFlood)
	return nil
}

// stoppedClients: a client stopped (SIGSTOP) in the middle of a SEND
// bandwidth test over RDMA; the next client, over RDMA, is served once the
// server drops the stopped one at its heartbeat deadline, and runs every op
// and mode.
func stoppedClients(t *Fx) error {
	srv, err := t.serverAt("server", "127.0.0.1", t.Port())
	if err != nil {
		return err
	}
	victim, err := t.clientOn("stopped client", "127.0.0.1", t.Port(), []string{"--op", "send", "--mode", "bw"})
	if err != nil {
		return err
	}
	victim.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	p, err := t.Start("next client", append([]string{"run", "127.0.0.1", "-p", fmt.Sprint(t.Port())}, nextAll...)...)
	if err != nil {
		return err
	}
	// served within the heartbeat deadline (and the busy retry's pause)
	for strings.Count(srv.Output(), ") connected") < 2 {
		if time.Since(stopped) > heartbeatDeadline+2*time.Second || p.Exited() {
			return fmt.Errorf("the next client not served %v after the stop:\n%s", time.Since(stopped).Round(time.Millisecond), indent(srv.Output()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	in := time.Since(stopped)
	code, _ := p.Wait(120 * time.Second)
	if code != 0 {
		return fmt.Errorf("the next client after a stopped one: exit %d after %v:\n%s\n%s", code, time.Since(stopped).Round(time.Millisecond), indent(p.Output()), dmesgTail())
	}
	log := srv.Output()
	served := strings.LastIndex(log, "connected")
	if !strings.Contains(log, "send bw 64K: client lost during the test") || served < strings.Index(log, "client lost") {
		return fmt.Errorf("the server's log does not tell of the stopped client before the next one:\n%s", indent(log))
	}
	t.Logf("lockout: next client served %v after the stop, all its tests (every op and mode) done after %v",
		in.Round(time.Millisecond), time.Since(stopped).Round(time.Millisecond))
	return nil
}

// dmesgTail is the kernel's last lines (an OOM kill, an rxe warning).
func dmesgTail() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, "sh", "-c", "dmesg | tail -15").CombinedOutput()
	return "    dmesg:\n" + indent(string(out))
}

// stopInVerify: the server stopped (SIGSTOP) in the --verify pass; the
// client exits 4 at the heartbeat deadline, not after the pass's 20 s
// step timeout.
func stopInVerify(t *Fx) error {
	srv, err := t.Server()
	if err != nil {
		return err
	}
	c, err := t.Start("client", "run", "127.0.0.1", "-p", fmt.Sprint(t.Port()), "--op", "write", "--mode", "bw", "--size", "1M",
		"-n", "64", "--verify", "--connect-timeout", "10s")
	if err != nil {
		return err
	}
	if err := srv.WaitOutput("--verify pass", 30*time.Second); err != nil {
		return err
	}
	srv.Signal(syscall.SIGSTOP)
	defer srv.Signal(syscall.SIGCONT)
	return exitAfter(c, 4, heartbeatDeadline, "no heartbeat from the server")
}
