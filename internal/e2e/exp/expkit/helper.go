//go:build experiment

package expkit

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

// HelperEnv makes the test binary a helper instead of running tests: its
// value names the helper, the binary's arguments are the helper's. The bed
// shares the host's root with every guest, so the test binary at its host
// path runs in the other guests too (vmtest.Peer.Command).
const HelperEnv = "RDMABENCH_EXP_HELPER"

// TagFile is where the serve helper writes the run going on, for the
// sampler helper on the same guest.
const TagFile = "/tmp/rdmabench-exp-tag"

var helpers = map[string]func(args []string) int{
	"serve":   serveHelper,
	"sampler": samplerHelper,
	"pinirq":  func([]string) int { PinIRQs(); return 0 },
	"rsh":     rshHelper,
	"rank0rc": rank0Helper,
}

// Register adds a helper (from an init function).
func Register(name string, f func(args []string) int) { helpers[name] = f }

// Main is the experiments' TestMain: a helper when HelperEnv is set, else
// the tests.
func Main(m *testing.M) {
	if h := os.Getenv(HelperEnv); h != "" {
		f, ok := helpers[h]
		if !ok {
			fmt.Fprintf(os.Stderr, "%s=%s: no such helper\n", HelperEnv, h)
			os.Exit(2)
		}
		os.Exit(f(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// Self is the test binary's path (the same in every guest).
func Self(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Command prepares name with args on peer p with this process's environment
// (less HelperEnv), as 'vmexec peer' does: the agent adds only the guest's own
// variables (RDMABENCH_GUEST, RDMABENCH_ADDR, ...), no PATH.
func Command(ctx context.Context, p vmtest.Peer, name string, args ...string) *vmtest.Cmd {
	c := p.Command(ctx, name, args...)
	c.Env = childEnv()
	return c
}

// Helper prepares helper name with args on peer p.
func Helper(ctx context.Context, t testing.TB, p vmtest.Peer, name string, args ...string) *vmtest.Cmd {
	c := Command(ctx, p, Self(t), args...)
	c.Env = append(c.Env, HelperEnv+"="+name)
	return c
}

// childEnv is this process's environment without HelperEnv.
func childEnv() []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, HelperEnv+"=") {
			env = append(env, e)
		}
	}
	return env
}

// signalContext ends at SIGTERM, SIGINT or SIGHUP.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
}

// exitCode is err's exit status (0: nil, 1: no status).
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	case errors.As(err, &ee):
		return 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
	}
	return 1
}

// serveHelper runs one server with rxe's counters around it:
//
//	serve -dir D -tag T -ctr P -out F -port N [-dev rxe2] -- CMD...
//
// It writes D/P-0.txt (Counters), T to TagFile, starts CMD (output appended
// to D/F), prints "listening" once something listens on port N, waits for
// CMD, writes "idle" to TagFile and D/P-1.txt, and exits with CMD's status.
func serveHelper(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	dir := fs.String("dir", "/tmp/rdmabench-exp", "directory for the files")
	tag := fs.String("tag", "", "the run, for the sampler")
	ctr := fs.String("ctr", "", "counter files prefix")
	out := fs.String("out", "server.log", "the server's output, appended")
	port := fs.Int("port", 18515, "the server's TCP port")
	dev := fs.String("dev", "rxe2", "the RDMA device whose counters are dumped")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "serve: usage: serve [flags] -- CMD...", err)
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	os.MkdirAll(*dir, 0o755)
	if *ctr != "" {
		os.WriteFile(filepath.Join(*dir, *ctr+"-0.txt"), []byte(Counters(*dev)), 0o644)
	}
	if *tag != "" {
		os.WriteFile(TagFile, []byte(*tag+"\n"), 0o644)
	}
	f, err := os.OpenFile(filepath.Join(*dir, *out), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Env = f, f, childEnv()
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	tick := time.NewTicker(50 * time.Millisecond)
wait:
	for {
		if Listening(*port) {
			fmt.Println("listening")
			werr = <-done
			break
		}
		select {
		case werr = <-done:
			break wait
		case <-tick.C:
		}
	}
	tick.Stop()
	rc := exitCode(werr)
	if rc != 0 {
		fmt.Fprintf(f, "server %s failed: exit %d\n", *tag, rc)
	}
	if *tag != "" {
		os.WriteFile(TagFile, []byte("idle\n"), 0o644)
	}
	if *ctr != "" {
		os.WriteFile(filepath.Join(*dir, *ctr+"-1.txt"), []byte(Counters(*dev)), 0o644)
	}
	return rc
}

// samplerHelper prints a Sample line every 0.5 s with the run TagFile
// names, until a signal:  sampler [DEV]
func samplerHelper(args []string) int {
	dev := "rxe2"
	if len(args) > 0 {
		dev = args[0]
	}
	ctx, stop := signalContext()
	defer stop()
	os.WriteFile(TagFile, []byte("idle\n"), 0o644)
	RunSampler(ctx, os.Stdout, dev, func() string {
		b, _ := os.ReadFile(TagFile)
		if t := strings.TrimSpace(string(b)); t != "" {
			return t
		}
		return "idle"
	})
	return 0
}

// rshHelper is a launcher's remote shell (MPICH hydra's -launcher-exec,
// Open MPI's plm_rsh_agent) without ssh: rsh HOST CMD... runs "sh -c CMD..."
// (the words joined by spaces, as ssh does) in the guest HOST names (its
// address or name; this guest's runs here), through the bed's agent.
func rshHelper(args []string) int {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") { // ssh-style options: none needed
		args = args[1:]
	}
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "rsh: usage: rsh HOST CMD...")
		return 255
	}
	host, line := args[0], strings.Join(args[1:], " ")
	ctx, stop := signalContext()
	defer stop()
	if p, ok := peerOf(host); ok {
		c := p.Command(ctx, "sh", "-c", line)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		// what a remote shell over ssh has: the launcher passes the rest itself
		for _, k := range []string{"PATH", "HOME", "LD_LIBRARY_PATH"} {
			if v, ok := os.LookupEnv(k); ok {
				c.Env = append(c.Env, k+"="+v)
			}
		}
		if err := c.Run(); err != nil && c.ExitCode() < 0 {
			fmt.Fprintf(os.Stderr, "rsh %s: %v\n", host, err)
			return 255
		}
		return c.ExitCode()
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, os.Stdout, os.Stderr, childEnv()
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	return exitCode(cmd.Run())
}

// peerOf returns the other guest host names (address, name, or meshN),
// false for this guest or an unknown name (run here).
func peerOf(host string) (vmtest.Peer, bool) {
	for _, f := range strings.Split(os.Getenv(vmtest.PeersEnv), ",") {
		name, addr, ok := strings.Cut(f, "=")
		if ok && (host == addr || host == name || host == "mesh"+strings.TrimPrefix(name, "g")) {
			return vmtest.Peer{Name: name, Addr: addr}, true
		}
	}
	return vmtest.Peer{}, false
}

// Rank0Env names the file rank0rc writes rank 0's status to.
const Rank0Env = "RDMABENCH_EXP_RANK0_RC"

// rank0Helper runs CMD... and, in the task whose SLURM_PROCID is 0, writes
// its exit status to $RDMABENCH_EXP_RANK0_RC (srun's own status is the
// worst task's): rank0rc CMD...
func rank0Helper(args []string) int {
	if len(args) == 0 {
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, os.Stdout, os.Stderr, childEnv()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "rank0rc:", err)
		return 127
	}
	// the launcher's signals go to the rank
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	rc := exitCode(cmd.Wait())
	if os.Getenv("SLURM_PROCID") == "0" && os.Getenv(Rank0Env) != "" {
		os.WriteFile(os.Getenv(Rank0Env), []byte(fmt.Sprintln(rc)), 0o644)
	}
	return rc
}

// FetchDir copies directory dir of peer p into local (tar on the peer,
// unpacked here).
func FetchDir(ctx context.Context, p vmtest.Peer, dir, local string) error {
	c := Command(ctx, p, "tar", "-C", dir, "-cf", "-", ".")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	b, err := c.Output()
	if err != nil {
		return fmt.Errorf("%s: tar -C %s: %v: %s", p.Name, dir, err, stderr.String())
	}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			continue
		}
		dst := filepath.Join(local, name)
		switch h.Typeflag {
		case tar.TypeDir:
			os.MkdirAll(dst, 0o755)
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(dst), 0o755)
			data, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				return err
			}
		}
	}
}

// PeerFile reads path on peer p.
func PeerFile(ctx context.Context, p vmtest.Peer, path string) ([]byte, error) {
	return Command(ctx, p, "cat", path).Output()
}
