package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// T is one case's context: the binary, the processes it started and their
// output, killed and reaped when the case ends.
type T struct {
	bin   string
	id    string
	procs []*Proc
	port  int
	// cleanups run when the case ends, before its processes are killed
	cleanups []func()
}

// onCleanup runs f when the case ends.
func (t *T) onCleanup(f func()) { t.cleanups = append(t.cleanups, f) }

var nextPort = 19000

func newT(bin, id string) *T {
	nextPort++ // each case its own control port: a lingering socket cannot leak into the next
	return &T{bin: bin, id: id, port: nextPort}
}

// Port is this case's control port (TCP, on 127.0.0.1 unless a case says otherwise).
func (t *T) Port() int { return t.port }

// Addr is host:port of this case's port on host.
func (t *T) Addr(host string) string { return net.JoinHostPort(host, fmt.Sprint(t.port)) }

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
func (t *T) Start(name string, args ...string) (*Proc, error) {
	return t.StartCmd(name, exec.Command(t.bin, args...))
}

// StartCmd starts cmd, with its output captured.
func (t *T) StartCmd(name string, cmd *exec.Cmd) (*Proc, error) {
	p := &Proc{Name: name, cmd: cmd, out: &syncBuf{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	t.procs = append(t.procs, p)
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Server starts 'rdmabench server -p PORT' with args and waits until it
// accepts connections on addr (default 127.0.0.1).
func (t *T) Server(args ...string) (*Proc, error) {
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
func (t *T) WaitListen(host string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", t.Addr(host), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %v", t.Addr(host), within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Run runs the binary with args to its end, or kills it after limit.
// It returns the exit code (-1: killed at the limit), the output and how
// long it ran.
func (t *T) Run(limit time.Duration, args ...string) (code int, out string, took time.Duration) {
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
	deadline := time.Now().Add(limit)
	for !strings.Contains(p.Output(), s) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no %q in its output after %v", p.Name, s, limit)
		}
		if p.Exited() && !strings.Contains(p.Output(), s) {
			return fmt.Errorf("%s exited without %q", p.Name, s)
		}
		time.Sleep(20 * time.Millisecond)
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
func (t *T) cleanup() error {
	for _, f := range t.cleanups {
		f()
	}
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

func (t *T) dumpLogs(w io.Writer) {
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
