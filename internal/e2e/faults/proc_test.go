package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Fx is one case's fixture: the binary, the case's control port, the
// processes it started and their output, killed and reaped when the case
// ends (or when ctx, the case's time limit, is done).
type Fx struct {
	ctx   context.Context
	t     *testing.T
	bin   string
	mu    sync.Mutex // procs: a case may start processes from several goroutines
	procs []*Proc
	port  int
	// cleanups run when the case ends, before its processes are killed
	cleanups []func()
}

// onCleanup runs f when the case ends.
func (t *Fx) onCleanup(f func()) { t.cleanups = append(t.cleanups, f) }

// newFx is the fixture of one case: each case its own control port, so
// that a lingering socket cannot leak into the next.
func newFx(ctx context.Context, t *testing.T, bin string, port int) *Fx {
	return &Fx{ctx: ctx, t: t, bin: bin, port: port}
}

// Logf logs a line in the case's test log (shown with -v, or on failure).
func (t *Fx) Logf(format string, args ...any) {
	t.t.Helper()
	t.t.Logf(format, args...)
}

// TempDir is a directory of the case's, removed when it ends.
func (t *Fx) TempDir() string { return t.t.TempDir() }

// Port is this case's control port (TCP, on 127.0.0.1 unless a case says otherwise).
func (t *Fx) Port() int { return t.port }

// Addr is host:port of this case's port on host.
func (t *Fx) Addr(host string) string { return net.JoinHostPort(host, fmt.Sprint(t.port)) }

// Proc is a running rdmabench (or other) process and its combined output.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	out  *syncBuf
	done chan struct{}
	err  error // Wait's, once done is closed
}

// syncBuf is a bytes.Buffer safe for the process's writers and our readers.
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

// Start starts the binary with args (its own process group).
func (t *Fx) Start(name string, args ...string) (*Proc, error) {
	return t.StartCmd(name, t.Command(t.bin, args...))
}

// Command is exec.CommandContext with the case's context: its process
// group is killed when the case runs into its time limit.
func (t *Fx) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(t.ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return cmd
}

// StartCmd starts cmd (made by Command), with its output captured.
func (t *Fx) StartCmd(name string, cmd *exec.Cmd) (*Proc, error) {
	p := &Proc{Name: name, cmd: cmd, out: &syncBuf{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	t.mu.Lock()
	t.procs = append(t.procs, p)
	t.mu.Unlock()
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Server starts 'rdmabench server -p PORT' with args and waits until it
// accepts connections on addr (default 127.0.0.1).
func (t *Fx) Server(args ...string) (*Proc, error) {
	p, err := t.Start("server", append([]string{"server", "-p", fmt.Sprint(t.port)}, args...)...)
	if err != nil {
		return nil, err
	}
	if err := t.WaitListen("127.0.0.1", 10*time.Second); err != nil {
		return nil, fmt.Errorf("server: %w; output:\n%s", err, p.Output())
	}
	return p, nil
}

// WaitListen waits until host:Port accepts a TCP connection.
func (t *Fx) WaitListen(host string, within time.Duration) error {
	return waitListen(t.ctx, t.Addr(host), within, nil)
}

// waitListen polls addr until it accepts a TCP connection, for at most
// within, or until p (when not nil) exits.
func waitListen(ctx context.Context, addr string, within time.Duration, p *Proc) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	d := net.Dialer{Timeout: time.Second}
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		if p != nil && p.Exited() {
			return fmt.Errorf("%s exited before it listened on %s", p.Name, addr)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nothing listens on %s after %v", addr, within)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Run runs the binary with args to its end, or kills it after limit.
// It returns the exit code (-1: killed at the limit), the output and how
// long it ran.
func (t *Fx) Run(limit time.Duration, args ...string) (code int, out string, took time.Duration) {
	p, err := t.Start("client", args...)
	if err != nil {
		return -1, err.Error(), 0
	}
	code, took = p.Wait(limit)
	return code, p.Output(), took
}

// Wait waits up to limit for p to exit and returns its exit code (-1 when
// it had to be killed, 128+N when a signal N ended it) and the time waited.
func (p *Proc) Wait(limit time.Duration) (int, time.Duration) {
	t0 := time.Now()
	select {
	case <-p.done:
	case <-time.After(limit):
		p.Signal(syscall.SIGQUIT) // a Go program prints its goroutines: where it hung
		select {
		case <-p.done:
		case <-time.After(2 * time.Second):
		}
		p.Signal(syscall.SIGKILL)
		<-p.done
		return -1, time.Since(t0)
	}
	return exitCode(p.err), time.Since(t0)
}

// Exited reports whether p has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to p's process group.
func (p *Proc) Signal(sig syscall.Signal) {
	if p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// Output is what p wrote so far (stdout and stderr).
func (p *Proc) Output() string { return p.out.String() }

// WaitOutput waits up to limit for p's output to contain s.
func (p *Proc) WaitOutput(s string, limit time.Duration) error {
	return p.WaitOutputAfter("", s, limit)
}

// WaitOutputAfter waits up to limit for p's output to contain s after the
// first mark (from the start when mark is "").
func (p *Proc) WaitOutputAfter(mark, s string, limit time.Duration) error {
	has := func() bool {
		out := p.Output()
		i := strings.Index(out, mark)
		return i >= 0 && strings.Contains(out[i+len(mark):], s)
	}
	what := fmt.Sprintf("%q", s)
	if mark != "" {
		what += fmt.Sprintf(" after %q", mark)
	}
	deadline := time.After(limit)
	for !has() {
		if p.Exited() && !has() {
			return fmt.Errorf("%s exited without %s", p.Name, what)
		}
		select {
		case <-deadline:
			return fmt.Errorf("%s: no %s in its output after %v", p.Name, what, limit)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
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

// cleanup kills every process the case started and still runs: SIGCONT
// first, for the stopped ones. A server still running at the end is fine
// (cases start servers to outlive clients); nothing may be left behind.
func (t *Fx) cleanup() error {
	for _, f := range t.cleanups {
		f()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.procs {
		if !p.Exited() {
			p.Signal(syscall.SIGCONT)
			p.Signal(syscall.SIGKILL)
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
				return fmt.Errorf("%s survived SIGKILL for 5 s", p.Name)
			}
		}
	}
	return nil
}

func (t *Fx) dumpLogs(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.procs {
		out := p.Output()
		if len(out) > 3000 {
			out = "...\n" + out[len(out)-3000:]
		}
		fmt.Fprintf(w, "    --- %s (%s):\n%s\n", p.Name, strings.Join(p.cmd.Args, " "), indent(out))
	}
}

func indent(s string) string {
	return "      " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n      ")
}
