//go:build experiment

package exp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

// exitTimeout is the exit status of a command that ran past its limit, as
// timeout(1) reports it.
const exitTimeout = 124

// requireBed fails the test outside the one-guest bed: the experiments need
// its devices (rxe0 on lo, rxe1 on dummy0 192.0.2.1).
func requireBed(t *testing.T) {
	t.Helper()
	for _, d := range []string{"rxe0", "rxe1"} {
		if _, err := os.Stat("/sys/class/infiniband/" + d); err != nil {
			t.Fatalf("no %s: this experiment runs in the one-guest bed (build/vmexec run -- build/exp.test ...; see the Makefile)", d)
		}
	}
}

// rdmabench returns the binary under test ($RDMABENCH_BIN).
func rdmabench(t *testing.T) string {
	t.Helper()
	return vmtest.Binary(t)
}

// outDir returns $RDMABENCH_OUT (created), or a temporary directory.
func outDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("RDMABENCH_OUT")
	if d == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// envInt returns the positive integer in $name, or def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// envStr returns $name, or def when it is unset or empty.
func envStr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// lookPath finds a program (perftest's tools, rdma) or fails the test.
func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s: %v (perftest and rdma-core: make deps)", name, err)
	}
	return p
}

// dropinBin makes a directory of symbolic links named as perftest's tools to
// the rdmabench under test (the drop-in picks its tool by its name).
func dropinBin(t *testing.T, tools ...string) string {
	t.Helper()
	bin, dir := rdmabench(t), filepath.Join(t.TempDir(), "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		p := filepath.Join(dir, tool)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if err := os.Symlink(bin, p); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// proc is a started command with a time limit.
type proc struct {
	cmd    *exec.Cmd
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	rc     int
}

// start starts name with args, its output to stdout and stderr (nil:
// discarded), killed after limit. env is added to the environment.
func start(limit time.Duration, stdout, stderr io.Writer, env []string, name string, args ...string) (*proc, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// past the limit: SIGTERM, as timeout(1) sends, so that the tools release
	// their RDMA resources; SIGKILL 5 s later
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	p := &proc{cmd: cmd, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.rc = exitCode(ctx, cmd, err)
		cancel()
		close(p.done)
	}()
	return p, nil
}

func exitCode(ctx context.Context, cmd *exec.Cmd, err error) int {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return exitTimeout
	}
	if err == nil {
		return 0
	}
	if st := cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return st.ExitCode()
	}
	return -1
}

// wait returns the exit status (124 past the limit).
func (p *proc) wait() int {
	<-p.done
	return p.rc
}

// running reports whether the command has not exited yet.
func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and waits for the exit (SIGKILL after 10 s).
func (p *proc) stop() int {
	if p.running() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
		}
	}
	return p.wait()
}

// run runs name with args to its end or its limit and returns its exit
// status (124 past the limit, -1 when it did not start).
func run(limit time.Duration, stdout, stderr io.Writer, env []string, name string, args ...string) int {
	p, err := start(limit, stdout, stderr, env, name, args...)
	if err != nil {
		if stderr != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
		}
		return -1
	}
	return p.wait()
}

// create creates a file for a command's output; the test closes it.
func create(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// readFile returns a file's text ("" when it cannot be read).
func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// poll calls cond every interval until it holds (nil) or within has passed.
func poll(within, interval time.Duration, cond func() bool) error {
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v", within)
		}
		time.Sleep(interval)
	}
}

// tcpListening reports whether a TCP socket listens on port
// (/proc/net/tcp and tcp6: local address :PORT in hex, state 0A).
func tcpListening(port int) bool {
	suffix := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) > 3 && strings.HasSuffix(fs[1], suffix) && fs[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// waitListen waits until something listens on TCP port (at most within).
func waitListen(port int, within time.Duration) error {
	if err := poll(within, 100*time.Millisecond, func() bool { return tcpListening(port) }); err != nil {
		return fmt.Errorf("nothing listening on TCP port %d: %w", port, err)
	}
	return nil
}

// cmListening reports whether an rdma_cm id listens on port: rdma_cm's ports
// are not in /proc/net/tcp ('rdma resource show cm_id', state LISTEN).
func cmListening(port int) bool {
	out, err := exec.Command("rdma", "resource", "show", "cm_id").Output()
	if err != nil {
		return false
	}
	p := strconv.Itoa(port)
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.Contains(l, "LISTEN") {
			continue
		}
		for _, f := range strings.Fields(l) {
			if i := strings.LastIndexAny(f, ":."); i >= 0 && f[i+1:] == p {
				return true
			}
		}
	}
	return false
}

// waitCMListen waits until an rdma_cm id listens on port (at most within).
func waitCMListen(port int, within time.Duration) error {
	if err := poll(within, 100*time.Millisecond, func() bool { return cmListening(port) }); err != nil {
		return fmt.Errorf("no rdma_cm id listening on port %d: %w", port, err)
	}
	return nil
}

// loadavg is the first three fields of /proc/loadavg ("?" when unreadable).
func loadavg() string {
	f := strings.Fields(readFile("/proc/loadavg"))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
