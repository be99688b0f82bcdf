package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Every wait ends: kills and stops of either side in the middle of a test,
// a port going down, signals and --run-timeout on the client.

// peerLostWithin is how soon a client must exit after its server was
// killed (the acceptance: 3 s).
const peerLostWithin = 3 * time.Second

// heartbeatDeadline is the client's deadline for the server's heartbeat
// (bench.heartbeatTimeout), plus slack for a loaded 2-CPU guest.
const heartbeatDeadline = 6*time.Second + 3*time.Second

// midTest are the client flags of a test that runs long (30 s) and prints
// an interval line every 200 ms: the first one says it is measuring.
var midTest = []string{"-D", "30s", "--interval", "200ms", "--connect-timeout", "10s"}

// measuring is in every interval line ("[  0.00-  0.20 s] ...").
const measuring = " s]  "

// waitMode is one op and mode of a client: its flags after 'run HOST -p PORT'.
type waitMode struct {
	name string
	args []string
}

var waitModes = []waitMode{
	{"send-lat", []string{"--op", "send", "--mode", "lat"}},
	{"send-bw", []string{"--op", "send", "--mode", "bw"}},
	{"write-lat", []string{"--op", "write", "--mode", "lat"}},
	{"write-bw", []string{"--op", "write", "--mode", "bw"}},
	{"read-lat", []string{"--op", "read", "--mode", "lat"}},
	{"read-bw", []string{"--op", "read", "--mode", "bw"}},
	{"write-bw-4qps", []string{"--op", "write", "--mode", "bw", "--qps", "4"}},
	{"write-bw-bidir", []string{"--op", "write", "--mode", "bw", "-b"}},
	{"tcp-lat", []string{"--transport", "tcp", "--mode", "lat"}},
	{"tcp-bw", []string{"--transport", "tcp", "--mode", "bw"}},
}

// stopModes are the modes of the SIGSTOP case, which waits for the
// heartbeat deadline: the pairs run at once, each on its own port (the
// RDMA one with a passive server: its device answers for it).
var stopModes = []string{"write-bw", "tcp-bw"}

func modeArgs(name string) []string {
	for _, m := range waitModes {
		if m.name == name {
			return m.args
		}
	}
	panic("no wait mode " + name)
}

func init() {
	for _, m := range waitModes {
		register(Case{Group: "waits", Name: "kill-server-" + m.name, Run: func(t *Fx) error { return killServer(t, m.args) }})
	}
	register(
		Case{Group: "waits", Name: "kill-server-rdma-cm", Run: func(t *Fx) error {
			return killServerAt(t, "192.0.2.1", []string{"--op", "write", "--mode", "bw", "-R"})
		}},
		Case{Group: "waits", Name: "kill-client-write-bw", Run: func(t *Fx) error { return loseClient(t, syscall.SIGKILL) }},
		// the two stop cases wait out heartbeat deadlines (with 3 s of slack): one batch
		Case{Group: "waits", Name: "stop-server-" + strings.Join(stopModes, ","), Parallel: true, Run: stopServers},
		Case{Group: "waits", Name: "stop-client-write-bw", Parallel: true, Run: func(t *Fx) error { return loseClient(t, syscall.SIGSTOP) }},
		Case{Group: "waits", Name: "port-down-write-bw", Run: portDown},
		Case{Group: "waits", Name: "sigint-partial-json", Run: func(t *Fx) error { return interruptClient(t, syscall.SIGINT, 130) }},
		Case{Group: "waits", Name: "sigterm-partial-json", Run: func(t *Fx) error { return interruptClient(t, syscall.SIGTERM, 143) }},
		Case{Group: "waits", Name: "run-timeout", Run: runTimeout},
	)
}

// serverAt starts 'rdmabench server' on host:port and waits until it listens.
func (t *Fx) serverAt(name, host string, port int, args ...string) (*Proc, error) {
	p, err := t.Start(name, append([]string{"server", "--bind", host, "-p", fmt.Sprint(port)}, args...)...)
	if err != nil {
		return nil, err
	}
	if err := waitListen(t.ctx, net.JoinHostPort(host, fmt.Sprint(port)), 10*time.Second, p); err != nil {
		return nil, fmt.Errorf("%s: %w; output:\n%s", name, err, indent(p.Output()))
	}
	return p, nil
}

// clientOn starts a long client of mode args against host:port and waits
// until it measures.
func (t *Fx) clientOn(name, host string, port int, args []string) (*Proc, error) {
	c, err := t.Start(name, append(append([]string{"run", host, "-p", fmt.Sprint(port)}, args...), midTest...)...)
	if err != nil {
		return nil, err
	}
	if err := c.WaitOutput(measuring, 30*time.Second); err != nil {
		return nil, fmt.Errorf("%w; output:\n%s", err, indent(c.Output()))
	}
	return c, nil
}

// exitAfter waits up to limit+5 s for p and checks that it exited with
// want within limit and that its output has every string of mention.
func exitAfter(p *Proc, want int, limit time.Duration, mention ...string) error {
	return exitSince(p, want, time.Now(), limit, mention...)
}

// exitSince is exitAfter with limit counted from since (the fault).
func exitSince(p *Proc, want int, since time.Time, limit time.Duration, mention ...string) error {
	code, _ := p.Wait(time.Until(since.Add(limit+5*time.Second)) + time.Millisecond)
	took := time.Since(since)
	out := p.Output()
	switch {
	case code == -1:
		return fmt.Errorf("%s still running %v after the fault; output:\n%s", p.Name, limit+5*time.Second, indent(out))
	case code != want:
		return fmt.Errorf("%s: exit %d, want %d; output:\n%s", p.Name, code, want, indent(out))
	case took > limit:
		return fmt.Errorf("%s: exit %d after %v, want within %v", p.Name, code, took.Round(time.Millisecond), limit)
	}
	for _, m := range mention {
		if !strings.Contains(out, m) {
			return fmt.Errorf("%s: exit %d but the output lacks %q:\n%s", p.Name, code, m, indent(out))
		}
	}
	return nil
}

// killServer: kill -9 of the server in the middle of a test; the client
// exits with the peer code (4) within peerLostWithin, saying the server
// was lost.
func killServer(t *Fx, args []string) error { return killServerAt(t, "127.0.0.1", args) }

func killServerAt(t *Fx, host string, args []string) error {
	srv, err := t.serverAt("server", host, t.Port())
	if err != nil {
		return err
	}
	c, err := t.clientOn("client", host, t.Port(), args)
	if err != nil {
		return err
	}
	srv.Signal(syscall.SIGKILL)
	return exitAfter(c, 4, peerLostWithin, "lost: control connection closed")
}

// stopServers: SIGSTOP of the server in the middle of a test, for each of
// stopModes at once (each pair on its own port): every client exits 4 once
// the server's heartbeat is missing for the deadline.
func stopServers(t *Fx) error {
	var clients []*Proc
	var servers []*Proc
	for i, m := range stopModes {
		port := t.Port() + 1000 + i
		srv, err := t.serverAt("server-"+m, "127.0.0.1", port)
		if err != nil {
			return err
		}
		c, err := t.clientOn("client-"+m, "127.0.0.1", port, modeArgs(m))
		if err != nil {
			return err
		}
		clients, servers = append(clients, c), append(servers, srv)
	}
	for _, srv := range servers {
		srv.Signal(syscall.SIGSTOP)
	}
	stopped := time.Now()
	var errs []string
	for _, c := range clients {
		if err := exitSince(c, 4, stopped, heartbeatDeadline, "no heartbeat from the server"); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// loseClient: kill -9 or SIGSTOP of the client in the middle of a test;
// the server logs it and serves the next client (a stopped one within its
// heartbeat deadline).
func loseClient(t *Fx, sig syscall.Signal) error {
	srv, err := t.serverAt("server", "127.0.0.1", t.Port())
	if err != nil {
		return err
	}
	c, err := t.clientOn("client", "127.0.0.1", t.Port(), modeArgs("write-bw"))
	if err != nil {
		return err
	}
	c.Signal(sig)
	start := time.Now()
	if err := t.Serves("--connect-timeout", "20s"); err != nil {
		return err
	}
	if d := time.Since(start); d > heartbeatDeadline+5*time.Second {
		return fmt.Errorf("the next client was served %v after the first one's %v", d.Round(time.Millisecond), sig)
	}
	log := srv.Output()
	if !strings.Contains(log, "write bw") || !(strings.Contains(log, "lost") || strings.Contains(log, "timeout") ||
		strings.Contains(log, "closed") || strings.Contains(log, "heartbeat")) {
		return fmt.Errorf("the server's log does not tell of the lost client:\n%s", indent(log))
	}
	return nil
}

// portDown: the port of rxe1 goes down (ip link set dummy0 down) in the
// middle of a test; the async event aborts the test at once, naming it
// (not after the 10 s no-progress timeout).
func portDown(t *Fx) error {
	if _, err := os.Stat("/sys/class/infiniband/rxe1"); err != nil {
		return fmt.Errorf("no rxe1 in this guest: %w", err)
	}
	if _, err := t.serverAt("server", "127.0.0.1", t.Port(), "-d", "rxe1"); err != nil {
		return err
	}
	c, err := t.clientOn("client", "127.0.0.1", t.Port(), append([]string{"-d", "rxe1"}, modeArgs("write-bw")...))
	if err != nil {
		return err
	}
	defer linkUp()
	if out, err := t.Command("ip", "link", "set", "dummy0", "down").CombinedOutput(); err != nil {
		return fmt.Errorf("ip link set dummy0 down: %v: %s", err, out)
	}
	code, took := c.Wait(peerLostWithin + 5*time.Second)
	out := c.Output()
	switch {
	case code == -1:
		return fmt.Errorf("client still running after the port went down; output:\n%s", indent(out))
	case took > peerLostWithin:
		return fmt.Errorf("client exit %d after %v, want within %v", code, took.Round(time.Millisecond), peerLostWithin)
	case code != 5 && code != 4: // its own event (5), or the server's word of it (4)
		return fmt.Errorf("client exit %d, want 5 (or 4); output:\n%s", code, indent(out))
	case !strings.Contains(out, "async event IBV_EVENT_PORT_ERR on rxe1 port 1"):
		return fmt.Errorf("client exit %d, but the output does not name the event:\n%s", code, indent(out))
	}
	return nil
}

// linkUp brings dummy0 back and waits until rxe1's port is active again.
func linkUp() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	exec.CommandContext(ctx, "ip", "link", "set", "dummy0", "up").Run()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile("/sys/class/infiniband/rxe1/ports/1/state"); err == nil && strings.Contains(string(b), "ACTIVE") {
			return
		}
	}
}

// partialDoc is what the cases read of a --json document.
type partialDoc struct {
	Partial bool `json:"partial"`
	Results []struct {
		Op   string `json:"op"`
		Mode string `json:"mode"`
	} `json:"results"`
}

// checkPartial wants a document marked partial that starts with the
// finished write lat and holds at most most finished results.
func checkPartial(path string, most int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("no JSON document: %w", err)
	}
	var d partialDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !d.Partial || len(d.Results) < 1 || len(d.Results) > most || d.Results[0].Op != "write" {
		return fmt.Errorf("%s: partial %v, results %+v; want partial with the finished write lat (and at most %d finished)", path, d.Partial, d.Results, most)
	}
	return nil
}

// interruptClient: a signal in the middle of the second test of a run:
// the client keeps the first result, writes the JSON with "partial": true
// and exits 128+N.
func interruptClient(t *Fx, sig syscall.Signal, want int) error {
	if _, err := t.Server(); err != nil {
		return err
	}
	path := filepath.Join(t.TempDir(), "partial.json")
	c, err := t.Start("client", "run", "127.0.0.1", "-p", fmt.Sprint(t.Port()), "--op", "write,send", "--mode", "lat",
		"-D", "1s", "--interval", "200ms", "--json", path)
	if err != nil {
		return err
	}
	// into the second test: its first interval line
	if err := c.WaitOutputAfter("[2/2] send lat", measuring, 30*time.Second); err != nil {
		return err
	}
	c.Signal(sig)
	if err := exitAfter(c, want, peerLostWithin, "interrupted", "write"); err != nil {
		return err
	}
	return checkPartial(path, 1)
}

// runTimeout: --run-timeout ends the run before its third test ends: the
// finished results are kept, the JSON says "partial": true, and the exit code is 7.
func runTimeout(t *Fx) error {
	path := filepath.Join(t.TempDir(), "partial.json")
	// 1.5 s tests: the first ends by about 1.7 s, leaving 2.3 s for a loaded
	// guest's setup; all three would take over 5 s
	c, err := t.Start("client", "loopback", "--op", "write,send,read", "--mode", "lat", "-D", "1500ms", "--run-timeout", "4s", "--json", path)
	if err != nil {
		return err
	}
	if err := exitAfter(c, 7, 4*time.Second+peerLostWithin, "--run-timeout 4s expired"); err != nil {
		return err
	}
	return checkPartial(path, 2) // write, and on a quiet guest send too; never read
}
