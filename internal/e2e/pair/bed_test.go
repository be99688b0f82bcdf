package pair

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

func init() { vmtest.Layout(vmtest.Pair) }

// ctlPort is the server's default control port.
const ctlPort = "18515"

// measuring is in every interval line of a client run with --interval
// ("[  0.00-  0.20 s]  ..."): the test is under way.
const measuring = " s]  "

// bed is the pair bed as a test in g1 sees it.
type bed struct {
	bin  string      // the rdmabench under test (the same path in both guests: the host's root)
	here string      // this guest's wire address
	peer vmtest.Peer // g2
}

func newBed(t *testing.T) *bed {
	t.Helper()
	vmtest.RequireGuest(t, "the two-host stage runs in the pair bed: go test -exec build/vmexec ./internal/e2e/pair")
	ps := vmtest.Peers(t)
	here := os.Getenv(vmtest.AddrEnv)
	if here == "" {
		t.Fatalf("%s is not set: this guest's wire address", vmtest.AddrEnv)
	}
	return &bed{bin: vmtest.Binary(t), here: here, peer: ps[0]}
}

// syncBuf collects a process's output for its writers and our readers.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls has every 20 ms until it holds, for at most limit; it
// gives up early when ended is closed (the process exited) and has still
// does not hold.
func waitFor(has func() bool, ended <-chan struct{}, limit time.Duration) error {
	deadline := time.After(limit)
	for !has() {
		select {
		case <-ended:
			if has() {
				return nil
			}
			return errors.New("exited")
		case <-deadline:
			return fmt.Errorf("not within %v", limit)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// server is 'rdmabench server --bind <peer>' running on the peer.
type server struct {
	cmd    *vmtest.Cmd
	out    *syncBuf // its stdout and stderr
	done   chan struct{}
	cancel context.CancelFunc
}

// Exited reports whether the server has ended.
func (s *server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Output is what the server wrote so far.
func (s *server) Output() string { return s.out.String() }

// WaitOutput waits up to limit for the server's output to contain want.
func (s *server) WaitOutput(want string, limit time.Duration) error {
	if err := waitFor(func() bool { return strings.Contains(s.Output(), want) }, s.done, limit); err != nil {
		return fmt.Errorf("no %q in the server's output (%v); output:\n%s", want, err, indent(s.Output()))
	}
	return nil
}

// startServer starts the server on the peer and waits until it listens
// on the wire; it is stopped (SIGTERM, then killed) when the test ends.
func (b *bed) startServer(t *testing.T) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{out: &syncBuf{}, done: make(chan struct{}), cancel: cancel}
	s.cmd = b.peer.Command(ctx, b.bin, "server", "--bind", b.peer.Addr)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start 'rdmabench server --bind %s' on %s: %v", b.peer.Addr, b.peer.Name, err)
	}
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() { s.stop(t) })
	addr := net.JoinHostPort(b.peer.Addr, ctlPort)
	listens := func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}
	if err := waitFor(listens, s.done, 60*time.Second); err != nil {
		t.Fatalf("the server on %s does not listen on %s (%v, exit %d); output:\n%s", b.peer.Name, addr, err, s.cmd.ExitCode(), indent(s.Output()))
	}
	return s
}

// stop ends the server: SIGCONT (a stopped one) and SIGTERM, then the
// context's kill; its output goes to the log when the test failed.
func (s *server) stop(t *testing.T) {
	if !s.Exited() {
		s.cmd.Signal(syscall.SIGCONT)
		s.cmd.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			s.cancel()
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				t.Errorf("the server on the peer survived SIGTERM and its context's kill for 20 s")
			}
		}
	}
	s.cancel()
	if t.Failed() {
		t.Logf("the server's output:\n%s", indent(s.Output()))
	}
}

// proc is a client running here.
type proc struct {
	name  string
	cmd   *exec.Cmd
	out   *syncBuf
	done  chan struct{}
	code  int // once done: the exit code, 128+N for signal N, -1 when it could not be waited for
	start time.Time
}

// start starts rdmabench with args here (its own process group), killed
// with SIGQUIT (a Go program prints where it hung) and then SIGKILL when
// the test ends or ctx is done.
func (b *bed) start(t *testing.T, ctx context.Context, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, out: &syncBuf{}, done: make(chan struct{}), code: -1}
	p.cmd = exec.CommandContext(ctx, b.bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.Cancel = func() error { return p.cmd.Process.Signal(syscall.SIGQUIT) }
	p.cmd.WaitDelay = 3 * time.Second
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		err := p.cmd.Wait()
		p.code = exitCode(err)
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.Exited() {
			p.Signal(syscall.SIGCONT)
			p.Signal(syscall.SIGKILL)
			<-p.done
		}
	})
	return p
}

// run runs rdmabench with args here to its end, for at most limit; code
// -1: it was still running at the limit (and was killed). A run that failed
// while this guest stood still for stallLimit or more (its host froze: on
// resume every deadline in the guest had passed at once, the client's wait
// for the server's heartbeat among them) runs once more, and the log says
// so; a run that fails without a stall, or twice, is the result.
func (b *bed) run(t *testing.T, limit time.Duration, args ...string) (code int, out string, took time.Duration) {
	t.Helper()
	for try := 1; ; try++ {
		var stall time.Duration
		code, out, took, stall = b.runOnce(t, limit, args...)
		if code == 0 {
			return code, out, took
		}
		b.diagnose(t)
		if try > 1 || stall < stallLimit {
			return code, out, took
		}
		t.Logf("PAIR STALL: this guest stood still for %v during the run (exit %d after %v); once more:\n%s",
			stall.Round(time.Millisecond), code, took.Round(time.Millisecond), indent(out))
	}
}

// stallLimit is the longest this guest may stand still during a run that
// then fails before the run is retried: half the client's wait for the
// server's heartbeat (4 s).
const stallLimit = 2 * time.Second

// runOnce is one run of run, with the longest gap between this guest's
// ticks every stallTick while it ran.
func (b *bed) runOnce(t *testing.T, limit time.Duration, args ...string) (code int, out string, took, stall time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	p := b.start(t, ctx, "client", args...)
	gaps := make(chan time.Duration, 1)
	go func() {
		tick := time.NewTicker(stallTick)
		defer tick.Stop()
		last, most := time.Now(), time.Duration(0)
		for {
			select {
			case <-p.done:
				gaps <- most
				return
			case now := <-tick.C:
				most, last = max(most, now.Sub(last)), now
			}
		}
	}()
	<-p.done
	code, took, stall = p.code, time.Since(p.start), <-gaps
	if ctx.Err() != nil {
		code = -1
	}
	return code, p.Output(), took, stall
}

// stallTick is how often runOnce's watch ticks.
const stallTick = 100 * time.Millisecond

// guestState is what a guest's kernel says of its own time and load: a
// failed run logs it for both guests, so that a guest that stood still
// (starved or paused on the host: the server's heartbeats stopped) shows
// against the other in its clock, uptime, idle and steal.
const guestState = `echo "$(hostname): date $(date +%s.%N) uptime $(cut -d' ' -f1 /proc/uptime) loadavg $(cat /proc/loadavg)"; grep '^cpu ' /proc/stat`

// diagnose logs both guests' state (guestState), read one after the other.
func (b *bed) diagnose(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	here, err := exec.CommandContext(ctx, "sh", "-c", guestState).CombinedOutput()
	if err != nil {
		here = append(here, []byte(err.Error())...)
	}
	peer, err := b.peer.Command(ctx, "sh", "-c", guestState).Output()
	if err != nil {
		peer = append(peer, []byte(err.Error())...)
	}
	t.Logf("after the failed run, this guest:\n%s\n%s:\n%s", indent(string(here)), b.peer.Name, indent(string(peer)))
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// Exited reports whether p has ended.
func (p *proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to p's process group.
func (p *proc) Signal(sig syscall.Signal) {
	if p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// Output is what p wrote so far (stdout and stderr).
func (p *proc) Output() string { return p.out.String() }

// Wait waits up to limit for p to end: its exit code, or -1 (still running).
func (p *proc) Wait(limit time.Duration) int {
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
		return -1
	}
}

// WaitOutput waits up to limit for p's output to contain want.
func (p *proc) WaitOutput(want string, limit time.Duration) error {
	if err := waitFor(func() bool { return strings.Contains(p.Output(), want) }, p.done, limit); err != nil {
		return fmt.Errorf("%s: no %q in its output (%v); output:\n%s", p.name, want, err, indent(p.Output()))
	}
	return nil
}

// decode reads the JSON document at path into v.
func decode(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no JSON document: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// head is the first n bytes of s (a document in a failure message).
func head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
