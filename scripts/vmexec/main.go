// Command vmexec is the guest test bed (internal/vm) as a program: go test's
// -exec runner, a bed for a whole command (vmexec bed), one command in a guest
// (vmexec run), a command on another guest from inside one (vmexec peer), and,
// as PID 1 in a guest, the guest's agent. Build it static (CGO_ENABLED=0): it
// is the guest's /init. docs/testbed.md is the user's guide.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
	"github.com/rdmabench/rdmabench/internal/vm"
	"github.com/rdmabench/rdmabench/internal/vm/proto"
)

const usage = `Usage:
  vmexec TESTBINARY [ARGS...]      (go test -exec vmexec): run a test binary in guest g1
                                   of the layout it declares (vmtest.Layout; default one)
  vmexec bed [--layout L] [bed options] -- CMD [ARGS...]
                                   run CMD on the host with RDMABENCH_VM_BED set: every
                                   'vmexec TESTBINARY' under it shares one running bed
  vmexec run [--layout L] [--outdir HOSTDIR] [bed options] [--timeout S] [--env K=V]...
             [--guest gN] -- CMD [ARGS...]
                                   boot a bed, run CMD in g1 (or gN), power off
  vmexec peer NAME -- CMD [ARGS...]
                                   in a pair or mesh guest: run CMD on guest NAME
  vmexec wait-listen PORT [SECS]   wait (default 60 s) until a local TCP socket listens on
                                   PORT, without connecting (perftest's server takes one)

Bed options:
  --layout L      one (default), pair (g1, g2 on a wire), mesh (g1..g3 on a segment)
  --siw MODE      auto (default; RDMABENCH_SIW), require, off: siw1 on dummy1
  --mem MB        memory per guest (default 3072 one, 2048 pair, 1024 mesh)
  --smp N         vCPUs per guest (default 2)
  --numa N        NUMA nodes per guest (default 2 in one, else 1)
  --append ARGS   extra kernel arguments
  --boot S        boot deadline in seconds (default 300)
  --parallel      do not take the bed lock (RDMABENCH_VM_PARALLEL=1): hosts with the cores
  --console       copy the raw guest consoles to stderr
  --fresh         bed: a fresh guest for each command, the lock kept (RDMABENCH_VM_FRESH=1)
  --where W       bed, and 'vmexec --where W TESTBINARY': guest (default) or auto: a
                  test binary that links neither libibverbs nor librdmacm and declares
                  no layout runs on the host, with RDMABENCH_REQUIRE_RDMA=1
                  (RDMABENCH_VM_WHERE)

Environment: RDMABENCH_VM_LOCK (the lock file, default /tmp/rdmabench-guest.lock),
RDMABENCH_VM_LOCK_TIMEOUT (seconds to wait for another bed, default 3600; --timeout
starts once the lock is held), RDMABENCH_VM_PARALLEL, RDMABENCH_SIW, RDMABENCH_ACCEL,
RDMABENCH_QEMU, RDMABENCH_CACHE, RDMABENCH_VM_TIMES=1 (say how long each command ran),
RDMABENCH_VM_AHEAD (bed --fresh: guests kept booted ahead, 1 to 8, default 3).

Exit status: the command's (128+n when killed by signal n); 124 on timeout; 125 when
a guest failed (boot, panic, setup, lost agent); 2 on bad usage or a missing host
prerequisite.
`

func main() {
	if os.Getpid() == 1 {
		vm.AgentMain()
	}
	os.Exit(mainErr(os.Args[1:]))
}

func errf(format string, a ...any) { fmt.Fprintf(os.Stderr, "vmexec: "+format+"\n", a...) }

// code maps an error to an exit status, printing it.
func code(err error) int {
	if err == nil {
		return 0
	}
	var ge *vm.GuestError
	var te *vm.TimeoutError
	switch {
	case errors.As(err, &te):
		errf("error: %v", err)
		return 124
	case errors.As(err, &ge):
		errf("error: %v", err)
		return 125
	case errors.Is(err, vm.ErrUsage), errors.Is(err, vm.ErrPrereq):
		errf("error: %v", err)
		return 2
	case errors.Is(err, context.DeadlineExceeded):
		errf("error: %v", err)
		return 124
	}
	errf("error: %v", err)
	return 125
}

func mainErr(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Print(usage)
		return 0
	case "run":
		return cmdRun(args[1:])
	case "bed":
		return cmdBed(args[1:])
	case "peer":
		return cmdPeer(args[1:])
	case "wait-listen":
		return cmdWaitListen(args[1:])
	case "--where":
		// go test -exec 'vmexec --where auto'
		if len(args) < 3 {
			return code(fmt.Errorf("%w: --where W TESTBINARY [ARGS]", vm.ErrUsage))
		}
		os.Setenv("RDMABENCH_VM_WHERE", args[1])
		return cmdTest(args[2:])
	}
	return cmdTest(args)
}

type bedFlags struct {
	opts     vm.Options
	boot     int
	parallel bool
	console  bool
	fresh    bool   // vmexec bed: a fresh guest for each command (the lock is kept)
	where    string // vmexec bed: RDMABENCH_VM_WHERE for the command
	ahead    int    // vmexec bed --fresh: guests kept booted ahead (RDMABENCH_VM_AHEAD, default 3)
}

func (b *bedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.where, "where", "", "")
	fs.StringVar(&b.opts.Layout, "layout", vm.LayoutOne, "")
	fs.StringVar(&b.opts.Siw, "siw", envOr("RDMABENCH_SIW", "auto"), "")
	fs.IntVar(&b.opts.Mem, "mem", 0, "")
	fs.IntVar(&b.opts.SMP, "smp", 0, "")
	fs.IntVar(&b.opts.NUMA, "numa", 0, "")
	fs.StringVar(&b.opts.Append, "append", "", "")
	fs.IntVar(&b.boot, "boot", 300, "")
	fs.BoolVar(&b.parallel, "parallel", os.Getenv("RDMABENCH_VM_PARALLEL") == "1", "")
	fs.BoolVar(&b.console, "console", false, "")
	fs.BoolVar(&b.fresh, "fresh", os.Getenv("RDMABENCH_VM_FRESH") == "1", "")
}

func (b *bedFlags) finish() error {
	if b.boot <= 0 {
		return fmt.Errorf("%w: --boot must be a positive number of seconds, got %d", vm.ErrUsage, b.boot)
	}
	for _, v := range []struct {
		name string
		n    int
	}{{"mem", b.opts.Mem}, {"smp", b.opts.SMP}, {"numa", b.opts.NUMA}} {
		if v.n < 0 {
			return fmt.Errorf("%w: --%s must be a positive integer, got %d", vm.ErrUsage, v.name, v.n)
		}
	}
	b.ahead = 3
	if v := os.Getenv("RDMABENCH_VM_AHEAD"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 8 {
			return fmt.Errorf("%w: RDMABENCH_VM_AHEAD wants a whole number of guests from 1 to 8, got: %s", vm.ErrUsage, v)
		}
		b.ahead = n
	}
	b.opts.Boot = time.Duration(b.boot) * time.Second
	if b.console {
		b.opts.Console = os.Stderr
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %s: %v (see vmexec -h)", vm.ErrUsage, fs.Name(), err)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return nil, fmt.Errorf("%w: %s: no command given (vmexec %s [options] -- CMD...)", vm.ErrUsage, fs.Name(), fs.Name())
	}
	return rest, nil
}

// lockBed takes the bed lock unless parallel, waiting at most
// RDMABENCH_VM_LOCK_TIMEOUT seconds (default 3600) for another bed.
func lockBed(ctx context.Context, parallel bool) (func(), error) {
	if parallel {
		return func() {}, nil
	}
	secs := 3600
	if v := os.Getenv("RDMABENCH_VM_LOCK_TIMEOUT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%w: RDMABENCH_VM_LOCK_TIMEOUT wants whole seconds, got: %s", vm.ErrUsage, v)
		}
		secs = n
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second)
	defer cancel()
	rel, err := vm.Lock(ctx, vm.LockPath(), os.Stderr)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return nil, &vm.TimeoutError{Msg: fmt.Sprintf("%v (RDMABENCH_VM_LOCK_TIMEOUT=%d s)", err, secs)}
	}
	return rel, err
}

// running is set while a command runs in a guest: until then a signal
// cancels (the lock wait, the boot) instead of being forwarded.
var running atomic.Bool

// signals forwards SIGINT, SIGTERM, SIGQUIT, SIGHUP to the guest command
// while one runs; a second SIGINT or SIGTERM, or any of them before the
// command started, cancels.
func signals(cancel func()) (chan int, func()) {
	in := make(chan os.Signal, 4)
	signal.Notify(in, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGHUP)
	out := make(chan int, 4)
	stop := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case s := <-in:
				sig := int(s.(syscall.Signal))
				if !running.Load() {
					cancel()
					continue
				}
				if sig == int(syscall.SIGINT) || sig == int(syscall.SIGTERM) {
					n++
					if n > 1 {
						cancel()
						continue
					}
				}
				select {
				case out <- sig:
				default:
				}
			case <-stop:
				return
			}
		}
	}()
	return out, func() { signal.Stop(in); close(stop) }
}

type envList []string

func (e *envList) String() string { return strings.Join(*e, " ") }
func (e *envList) Set(v string) error {
	k, _, ok := strings.Cut(v, "=")
	if !ok || k == "" || strings.ContainsAny(k, " \t\n=") {
		return fmt.Errorf("--env wants K=V, got: %s", v)
	}
	*e = append(*e, v)
	return nil
}

// callerEnv is the caller's environment for a guest run, without the bed's
// own variables.
func callerEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "RDMABENCH_VM_BED=") || strings.HasPrefix(kv, vmtest.QueryEnv+"=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

func cmdRun(args []string) int {
	fs := newFlags("run")
	var bf bedFlags
	bf.register(fs)
	var outdir, guest string
	var timeout int
	var envs envList
	fs.StringVar(&outdir, "outdir", "", "")
	fs.StringVar(&guest, "guest", "g1", "")
	fs.IntVar(&timeout, "timeout", 600, "")
	fs.Var(&envs, "env", "")
	argv, err := parse(fs, args)
	if err == nil {
		err = bf.finish()
	}
	if err == nil && timeout <= 0 {
		err = fmt.Errorf("%w: --timeout must be a positive number of seconds, got %d", vm.ErrUsage, timeout)
	}
	if err != nil {
		return code(err)
	}
	if outdir != "" {
		if err := os.MkdirAll(outdir, 0o755); err != nil {
			return code(fmt.Errorf("%w: --outdir: %v", vm.ErrUsage, err))
		}
		if outdir, err = filepath.Abs(outdir); err != nil {
			return code(err)
		}
		bf.opts.OutDir = outdir
	}
	// the timeout starts once this bed holds the lock: waiting for another bed
	// has its own deadline (RDMABENCH_VM_LOCK_TIMEOUT)
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs, stop := signals(cancel)
	defer stop()
	release, err := lockBed(base, bf.parallel)
	if err != nil {
		return code(err)
	}
	defer release()
	ctx, cancelRun := context.WithTimeout(base, time.Duration(timeout)*time.Second)
	defer cancelRun()
	bed, err := vm.Boot(ctx, bf.opts)
	if err != nil {
		return code(err)
	}
	defer bed.Close()
	g, err := bed.Guest(guest)
	if err != nil {
		return code(err)
	}
	wd, _ := os.Getwd()
	t0 := time.Now()
	running.Store(true)
	e, err := g.Run(ctx, proto.Run{Argv: argv, Env: callerEnv(envs...), Dir: wd}, os.Stdout, os.Stderr, sigs)
	if err != nil {
		return code(err)
	}
	if os.Getenv("RDMABENCH_VM_TIMES") == "1" {
		errf("%s: command %.1f s", g.Name, time.Since(t0).Seconds())
	}
	if e.Error != "" {
		errf("%s: %s", g.Name, e.Error)
	}
	return e.Code
}

// cmdPeer runs a command on another guest from inside one.
func cmdPeer(args []string) int {
	fs := newFlags("peer")
	var timeout int
	fs.IntVar(&timeout, "timeout", 0, "")
	rest, err := parse(fs, args)
	if err != nil {
		return code(err)
	}
	if len(rest) < 2 {
		return code(fmt.Errorf("%w: peer: want NAME -- CMD...", vm.ErrUsage))
	}
	name, argv := rest[0], rest[1:]
	if argv[0] == "--" {
		argv = argv[1:]
	}
	if len(argv) == 0 {
		return code(fmt.Errorf("%w: peer %s: no command", vm.ErrUsage, name))
	}
	addr := ""
	for _, f := range strings.Split(os.Getenv(vmtest.PeersEnv), ",") {
		if n, a, ok := strings.Cut(f, "="); ok && n == name {
			addr = a
		}
	}
	if addr == "" {
		return code(fmt.Errorf("%w: peer %s: not among %s=%q (vmexec peer runs in a pair or mesh guest)", vm.ErrUsage, name, vmtest.PeersEnv, os.Getenv(vmtest.PeersEnv)))
	}
	ctx := context.Background()
	var cancel context.CancelFunc = func() {}
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, time.Duration(timeout)*time.Second)
	}
	defer cancel()
	ctx, cancel2 := context.WithCancel(ctx)
	defer cancel2()
	sigs, stop := signals(cancel2)
	defer stop()
	running.Store(true)
	wd, _ := os.Getwd()
	cmd := vmtest.Peer{Name: name, Addr: addr}.Command(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Dir, cmd.Env = os.Stdout, os.Stderr, wd, callerEnv()
	if err := cmd.Start(); err != nil {
		return code(&vm.GuestError{Msg: err.Error()})
	}
	go func() {
		for s := range sigs {
			cmd.Signal(syscall.Signal(s))
		}
	}()
	err = cmd.Wait()
	if c := cmd.ExitCode(); c >= 0 {
		return c
	}
	if ctx.Err() == context.DeadlineExceeded {
		return code(&vm.TimeoutError{Msg: fmt.Sprintf("peer %s: timed out after %d s", name, timeout)})
	}
	return code(&vm.GuestError{Msg: fmt.Sprint(err)})
}

// queryLayout asks a test binary for its layout and, where it declares one
// (vmtest.GuestTests), the pattern of its tests that need the bed.
func queryLayout(bin string) (layout, guestTests string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), vmtest.QueryEnv+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("%w: asking %s for its layout (%s=1 -test.run=^$): %v: %s", vm.ErrUsage, bin, vmtest.QueryEnv, err, strings.TrimSpace(errb.String()))
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if l, ok := strings.CutPrefix(line, vmtest.LayoutTag); ok {
			layout = l
		}
		if p, ok := strings.CutPrefix(line, vmtest.GuestTag); ok {
			guestTests = p
		}
	}
	return layout, guestTests, nil
}

// hasRunFlag reports whether the caller chose tests (-test.run), which a
// split run (vmtest.GuestTests) then leaves whole, in the guest.
func hasRunFlag(args []string) bool {
	for _, a := range args {
		if a == "-test.run" || strings.HasPrefix(a, "-test.run=") {
			return true
		}
	}
	return false
}

// cmdTest: go test -exec vmexec: TESTBINARY ARGS.
func cmdTest(args []string) (exitCode int) {
	bin := args[0]
	if strings.HasPrefix(bin, "-") {
		return code(fmt.Errorf("%w: unknown option %s (see vmexec -h)", vm.ErrUsage, bin))
	}
	if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	if _, err := os.Stat(bin); err != nil {
		return code(fmt.Errorf("%w: %v", vm.ErrUsage, err))
	}
	layout, guestTests, err := queryLayout(bin)
	if err != nil {
		return code(err)
	}
	declared := layout != ""
	host := layout == vmtest.Host // needs no RDMA: the host under auto, else g1 of one
	if layout == "" || host {
		layout = vm.LayoutOne
	}
	where := envOr("RDMABENCH_VM_WHERE", "guest")
	switch where {
	case "guest":
	case "auto":
		if host {
			return runHost(bin, args[1:])
		}
		if guestTests != "" && !hasRunFlag(args[1:]) {
			// the tests that need no RDMA here, the others in the guest
			hostRC := runHost(bin, append(append([]string(nil), args[1:]...), "-test.skip="+guestTests))
			args = append(append([]string(nil), args...), "-test.run="+guestTests)
			defer func() {
				if hostRC != 0 && exitCode == 0 {
					exitCode = hostRC
				}
			}()
		}
		if !declared {
			rdma, err := vm.LinksRDMA(bin)
			if err != nil {
				return code(err)
			}
			if !rdma {
				return runHost(bin, args[1:])
			}
		}
	default:
		return code(fmt.Errorf("%w: RDMABENCH_VM_WHERE wants guest or auto, got: %s", vm.ErrUsage, where))
	}
	wd, _ := os.Getwd()
	run := proto.Run{Argv: append([]string{bin}, args[1:]...), Env: callerEnv(), Dir: wd, Layout: layout}
	if sock := os.Getenv("RDMABENCH_VM_BED"); sock != "" {
		return viaBed(sock, run)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs, stop := signals(cancel)
	defer stop()
	release, err := lockBed(ctx, os.Getenv("RDMABENCH_VM_PARALLEL") == "1")
	if err != nil {
		return code(err)
	}
	defer release()
	bed, err := vm.Boot(ctx, vm.Options{Layout: layout, Siw: envOr("RDMABENCH_SIW", "auto")})
	if err != nil {
		return code(err)
	}
	defer bed.Close()
	g, _ := bed.Guest("g1")
	running.Store(true)
	t0 := time.Now()
	e, err := g.Run(ctx, run, os.Stdout, os.Stderr, sigs)
	if err != nil {
		return code(err)
	}
	if os.Getenv("RDMABENCH_VM_TIMES") == "1" {
		errf("%s: %s: %.1f s in the guest", g.Name, filepath.Base(bin), time.Since(t0).Seconds())
	}
	if e.Error != "" {
		errf("%s: %s", g.Name, e.Error)
	}
	return e.Code
}

// runHost runs a test binary on the host (--where auto), with
// RDMABENCH_REQUIRE_RDMA=1 so that a misplaced RDMA test fails. Under a bed
// (RDMABENCH_VM_BED) it first takes a turn from the bed, so that it never runs
// beside a guest's tests or another host test binary, and it runs at nice 0
// where the host allows it, whatever the nice of the go test that runs it
// (make test builds at nice 19 beside the guest: docs/testbed.md).
func runHost(bin string, args []string) int {
	if sock := os.Getenv("RDMABENCH_VM_BED"); sock != "" {
		done, err := hostTurn(sock, bin)
		if err != nil {
			return code(err)
		}
		defer done()
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(callerEnv(), "RDMABENCH_REQUIRE_RDMA=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Ignore(syscall.SIGINT, syscall.SIGQUIT)
	err := startAtNice0(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal())
		}
		return ee.ExitCode()
	}
	return code(fmt.Errorf("%w: %v", vm.ErrUsage, err))
}

// startAtNice0 starts cmd at nice 0 when this process may lower its nice
// (root), else at this process's nice: the fork happens on a thread set to
// nice 0, which the child inherits, and that thread ends with its goroutine.
func startAtNice0(cmd *exec.Cmd) error {
	if os.Geteuid() != 0 {
		return cmd.Start()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
		unix.Setpriority(unix.PRIO_PROCESS, 0, 0)
		errc <- cmd.Start()
	}()
	return <-errc
}

// hostTurn asks the bed at sock for a turn to run bin on the host; done
// hands the turn back.
func hostTurn(sock, bin string) (done func(), err error) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return nil, &vm.GuestError{Msg: fmt.Sprintf("RDMABENCH_VM_BED=%s: %v (is 'vmexec bed' still running?)", sock, err)}
	}
	cl := &proto.Client{R: c, W: proto.NewWriter(c), Stdout: os.Stdout, Stderr: os.Stderr, Log: os.Stderr}
	if err := cl.Start(proto.Run{Argv: []string{bin}, HostTurn: true}); err != nil {
		c.Close()
		return nil, &vm.GuestError{Msg: err.Error()}
	}
	e, err := cl.Wait()
	if err == nil && e.Code != 0 {
		err = fmt.Errorf("the bed refused a host turn: %s", e.Error)
	}
	if err != nil {
		c.Close()
		return nil, &vm.GuestError{Msg: err.Error()}
	}
	return func() { c.Close() }, nil
}

// viaBed sends the run to the bed process's socket.
func viaBed(sock string, run proto.Run) int {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return code(&vm.GuestError{Msg: fmt.Sprintf("RDMABENCH_VM_BED=%s: %v (is 'vmexec bed' still running?)", sock, err)})
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs, stop := signals(cancel)
	defer stop()
	running.Store(true) // the bed boots and runs: signals go to it
	cl := &proto.Client{R: c, W: proto.NewWriter(c), Stdout: os.Stdout, Stderr: os.Stderr, Log: os.Stderr}
	if err := cl.Start(run); err != nil {
		return code(&vm.GuestError{Msg: err.Error()})
	}
	go func() {
		for {
			select {
			case s := <-sigs:
				cl.Signal(s)
			case <-ctx.Done():
				c.Close() // the bed kills the command
				return
			}
		}
	}()
	e, err := cl.Wait()
	if err != nil {
		return code(&vm.GuestError{Msg: err.Error()})
	}
	if e.Error != "" {
		errf("%s", e.Error)
	}
	return e.Code
}

// cmdBed runs CMD on the host with one bed for all vmexec TESTBINARY runs under it.
func cmdBed(args []string) int {
	fs := newFlags("bed")
	var bf bedFlags
	bf.register(fs)
	argv, err := parse(fs, args)
	if err == nil {
		err = bf.finish()
	}
	if err != nil {
		return code(err)
	}
	dir, err := os.MkdirTemp("", "vmexec-bed.")
	if err != nil {
		return code(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "bed.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return code(err)
	}
	s := newBedServer(bf)
	if bf.fresh {
		s.lk.Lock()
		s.startPreboot(bf.opts.Layout, true) // no guest runs yet
		s.lk.Unlock()
	}
	go s.serve(ln)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "RDMABENCH_VM_BED="+sock)
	if bf.where != "" {
		if bf.where != "guest" && bf.where != "auto" {
			return code(fmt.Errorf("%w: --where wants guest or auto, got: %s", vm.ErrUsage, bf.where))
		}
		cmd.Env = append(cmd.Env, "RDMABENCH_VM_WHERE="+bf.where)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Ignore(syscall.SIGINT, syscall.SIGQUIT) // the command (in our process group) gets them
	// SIGTERM and SIGHUP (a CI runner's cancel, a closed terminal) reach only
	// us: pass them on to the command and wait for it, so that the guests are
	// shut down below and no qemu outlives the bed
	term := make(chan os.Signal, 2)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(term)
	if err = cmd.Start(); err == nil {
		go func() {
			for sig := range term {
				cmd.Process.Signal(sig)
			}
		}()
		err = cmd.Wait()
	}
	ln.Close()
	s.shutdown()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal())
		}
		return ee.ExitCode()
	}
	return code(fmt.Errorf("%w: %v", vm.ErrPrereq, err))
}

type bedServer struct {
	flags bedFlags
	mu    chanMutex // held by the request being served: one run at a time
	bed   *vm.Bed
	used  time.Duration  // --fresh: the guest time bed's runs took so far
	downs sync.WaitGroup // beds shutting down in the background

	lk      sync.Mutex
	boots   int            // guarded by lk
	pres    []*preboot     // --fresh: the next beds, booting ahead of their turn, oldest first; guarded by lk
	aheadN  int            // how many beds to keep booted ahead (RDMABENCH_VM_AHEAD, default 3)
	waiting map[string]int // layouts of the guest runs waiting for mu; guarded by lk
	lockGo  bool           // the bed lock is being taken (or held); guarded by lk

	ctx     context.Context // the bed's life: shutdown cancels it
	cancel  context.CancelFunc
	locked  chan struct{} // closed once the bed lock is held, or failed (lockErr)
	lockErr error
	release func() // the bed lock's release, set before locked is closed
}

func newBedServer(bf bedFlags) *bedServer {
	ctx, cancel := context.WithCancel(context.Background())
	n := bf.ahead
	if n == 0 {
		n = 3
	}
	return &bedServer{flags: bf, mu: make(chanMutex, 1), waiting: map[string]int{}, aheadN: n,
		ctx: ctx, cancel: cancel, locked: make(chan struct{})}
}

// chanMutex is a mutex whose Lock can give up when a client goes away.
type chanMutex chan struct{}

// waitLock takes the bed lock once for the bed's whole life (the first
// caller starts it) and waits until it is held.
func (s *bedServer) waitLock(ctx context.Context) error {
	s.lk.Lock()
	if !s.lockGo {
		s.lockGo = true
		go func() {
			s.release, s.lockErr = lockBed(s.ctx, s.flags.parallel)
			close(s.locked)
		}()
	}
	s.lk.Unlock()
	select {
	case <-s.locked:
		return s.lockErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// preboot is a bed booting in the background (vm.Options.Background) while
// the current command runs, so that the next command under --fresh finds its
// guests up (paused) instead of booting them.
type preboot struct {
	layout string
	bg     *vm.Background
	cancel context.CancelFunc
	done   chan struct{} // closed when bed or err is set
	bed    *vm.Bed
	err    error
	log    bytes.Buffer // Boot's notes, replayed to the command that takes the bed
	t0     time.Time
	dur    time.Duration
	boot   int
}

// startPreboot boots a bed of layout in the background; urgent when no guest
// runs (vm.Background.Urgent). Called with lk held.
func (s *bedServer) startPreboot(layout string, urgent bool) {
	ctx, cancel := context.WithCancel(s.ctx)
	s.boots++
	p := &preboot{layout: layout, bg: &vm.Background{Urgent: urgent}, cancel: cancel,
		done: make(chan struct{}), t0: time.Now(), boot: s.boots}
	s.pres = append(s.pres, p)
	go func() {
		defer close(p.done)
		if p.err = s.waitLock(ctx); p.err != nil {
			return
		}
		o := s.flags.opts
		o.Layout = layout
		o.Log = &p.log
		o.Background = p.bg
		p.bed, p.err = vm.Boot(ctx, o)
		p.dur = time.Since(p.t0)
	}()
}

// aheadWait bounds the wait for a bed booted ahead once its run has come.
const aheadWait = 60 * time.Second

// tail is the last console lines of a preboot still booting, for the log.
func (p *preboot) tail() string {
	var b strings.Builder
	for _, g := range p.bg.Guests() {
		b.WriteString(g.Tail(30))
	}
	if b.Len() == 0 {
		return "(no guest started yet: the bed lock or the initramfs)\n"
	}
	return b.String()
}

// end cancels a preboot and shuts its bed down.
func (p *preboot) end() {
	p.cancel()
	<-p.done
	if p.bed != nil {
		p.bed.Close()
	}
}

// booting counts the beds booted ahead of layout. Called with lk held.
func (s *bedServer) booting(layout string) int {
	n := 0
	for _, p := range s.pres {
		if p.layout == layout {
			n++
		}
	}
	return n
}

// nextLayout is the layout the next bed booted ahead should have: that of a
// waiting run that has none booting, else the bed's default. Called with lk
// held.
func (s *bedServer) nextLayout() string {
	for l, n := range s.waiting {
		if n > s.booting(l) {
			return l
		}
	}
	return s.flags.opts.Layout
}

// arrive notes a guest run of layout waiting for its turn. Under --fresh,
// when no bed of its layout boots ahead, one is started, in place of the
// newest bed booting ahead of a layout no one waits for if the pool is full.
// leave undoes it once the run has its turn.
func (s *bedServer) arrive(layout string) (leave func()) {
	s.lk.Lock()
	defer s.lk.Unlock()
	s.waiting[layout]++
	if s.flags.fresh && s.waiting[layout] > s.booting(layout) {
		if len(s.pres) >= s.aheadN {
			for i := len(s.pres) - 1; i >= 0; i-- {
				if p := s.pres[i]; s.waiting[p.layout] < s.booting(p.layout) || s.waiting[p.layout] == 0 {
					s.pres = append(s.pres[:i], s.pres[i+1:]...)
					go p.end()
					break
				}
			}
		}
		if len(s.pres) < s.aheadN {
			s.startPreboot(layout, false)
		}
	}
	return func() {
		s.lk.Lock()
		s.waiting[layout]--
		s.lk.Unlock()
	}
}

// takePreboot ends the preboot: its bed when it is of layout, resumed, else
// nil (a preboot of another layout is shut down, a failed one reported to
// logw). Called with s.mu held.
func (s *bedServer) takePreboot(ctx context.Context, layout string, logw io.Writer) *vm.Bed {
	s.lk.Lock()
	var p *preboot
	for i, q := range s.pres {
		if q.layout == layout {
			p = q
			s.pres = append(s.pres[:i], s.pres[i+1:]...)
			break
		}
	}
	s.lk.Unlock()
	if p == nil {
		return nil
	}
	p.bg.Foreground() // someone waits for it now
	t0 := time.Now()
	select {
	case <-p.done:
	case <-ctx.Done():
		p.end()
		return nil
	case <-time.After(aheadWait):
		// once favoured a boot takes about 10 s: one still not up after this
		// is stuck (seen once in a loaded run: 300 s, the boot deadline)
		note(logw, "bed: the %s bed booted ahead is not up %v after its run came, booting again; its console:\n%s",
			layout, aheadWait, p.tail())
		go p.end()
		return nil
	}
	logw.Write(p.log.Bytes())
	if p.err != nil {
		note(logw, "bed: the %s bed booted ahead failed, booting again: %v", layout, p.err)
		return nil
	}
	err := p.bed.Resume()
	if err == nil {
		err = setClock(ctx, p.bed)
	}
	if err == nil {
		err = p.bed.CheckClocks(ctx) // booted on what others left: its clock may be off
	}
	if err != nil {
		fmt.Fprintf(logw, "vmexec: bed: the %s bed booted ahead did not resume, booting again: %v\n", layout, err)
		p.bed.Close()
		return nil
	}
	note(logw, "bed: %s layout up in %.1f s (boot %d, in the background; waited %.1f s for it)",
		layout, p.dur.Seconds(), p.boot, time.Since(t0).Seconds())
	return p.bed
}

// note writes a line of the bed's to the command's log, or with
// RDMABENCH_VM_TIMES=1 to the bed's own stderr, as it happens (go test shows a
// passing package's output only at its end, and only with -v or -bench).
func note(logw io.Writer, format string, a ...any) {
	if os.Getenv("RDMABENCH_VM_TIMES") == "1" {
		errf(format, a...)
		return
	}
	fmt.Fprintf(logw, "vmexec: "+format+"\n", a...)
}

// setClock sets each guest's clock to the host's: a guest paused while it
// waited for its turn kept its clock stopped.
func setClock(ctx context.Context, b *vm.Bed) error {
	for _, g := range b.Guests {
		now := time.Now()
		run := proto.Run{Argv: []string{"date", "-u", "-s", fmt.Sprintf("@%d.%09d", now.Unix(), now.Nanosecond())}}
		var out bytes.Buffer
		e, err := g.Run(ctx, run, &out, &out, nil)
		if err == nil && e.Code != 0 {
			err = fmt.Errorf("date -s: exit %d: %s %s", e.Code, strings.TrimSpace(out.String()), e.Error)
		}
		if err != nil {
			return fmt.Errorf("%s: setting the clock: %w", g.Name, err)
		}
	}
	return nil
}

func (s *bedServer) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go s.handle(c)
	}
}

// shutdown ends the preboot and the bed and releases the bed lock.
func (s *bedServer) shutdown() {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	s.lk.Lock()
	pres := s.pres
	s.pres = nil
	lockGo := s.lockGo
	s.lk.Unlock()
	for _, p := range pres {
		p.end()
	}
	s.down()
	s.downs.Wait()
	s.cancel()
	if lockGo {
		<-s.locked
		if s.release != nil {
			s.release()
		}
	}
}

// down shuts the running bed down in the background, its qemus under
// SCHED_IDLE (vm.Bed.Close): the next run does not wait for its power-off.
// The lock stays held; shutdown waits for every bed to be down.
func (s *bedServer) down() {
	if s.bed != nil {
		b := s.bed
		s.bed, s.used = nil, 0
		s.downs.Add(1)
		go func() {
			defer s.downs.Done()
			t0 := time.Now()
			b.Close()
			if os.Getenv("RDMABENCH_VM_TIMES") == "1" {
				errf("bed: a %s bed down in %.1f s", b.Layout, time.Since(t0).Seconds())
			}
		}()
	}
}

// reuseBelow: under --fresh, a bed whose runs have taken less guest time
// than this in all, each exiting 0, serves the next run of its layout too.
// A fresh guest costs a boot (about 11 s of CPU, and a wait of 3 to 8 s: a
// bed booted ahead gets little CPU beside a guest's tests) or a resume; the
// small packages (bench/device, bench/endpoint, ...: under 2 s each) shared
// one guest, the long stages (bench, internal/e2e, the faults) each get
// their own. What fresh guests guard against (docs/testbed.md, "Why
// VM_FRESH=1") came from a guest that had run minutes of tests, then idled.
const reuseBelow = 15 * time.Second

// keepBed: a bed whose runs took used in all, the last one passed or not,
// serves the next run (reuseBelow).
func keepBed(used time.Duration, passed bool) bool { return passed && used < reuseBelow }

// ahead, under --fresh, fills the pool of beds booting ahead while this
// command's runs (urgent: the first, while none runs): consecutive short
// test binaries each find a guest up. Called with s.mu held.
func (s *bedServer) ahead(urgent bool) {
	if !s.flags.fresh {
		return
	}
	s.lk.Lock()
	for len(s.pres) < s.aheadN {
		s.startPreboot(s.nextLayout(), urgent && len(s.pres) == 0)
	}
	s.lk.Unlock()
}

// next ends a command's bed under --fresh (the next command gets a fresh
// one; the lock stays held), unless its runs so far were short and passed
// (reuseBelow). Called with s.mu held.
func (s *bedServer) next(ran time.Duration, passed bool) {
	if !s.flags.fresh {
		return
	}
	if s.used += ran; keepBed(s.used, passed) {
		return
	}
	s.down()
	s.ahead(true)
}

func (s *bedServer) handle(c net.Conn) {
	defer c.Close()
	w := proto.NewWriter(c)
	typ, p, err := proto.ReadFrame(c)
	if err != nil || typ != proto.TRun {
		return
	}
	run, err := proto.DecodeRun(p)
	if err != nil {
		w.JSON(proto.TExit, proto.Exit{Code: 2, Error: err.Error()})
		return
	}
	// the client going away (EOF) cancels; TSignal frames are forwarded
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan int, 4)
	go func() {
		for {
			t, p, err := proto.ReadFrame(c)
			if err != nil {
				cancel()
				return
			}
			if t == proto.TSignal && len(p) == 1 {
				select {
				case sigs <- int(p[0]):
				default:
				}
			}
		}
	}()
	layout := run.Layout
	if layout == "" {
		layout = s.flags.opts.Layout
	}
	leave := func() {}
	if !run.HostTurn {
		leave = s.arrive(layout)
	}
	if os.Getenv("RDMABENCH_VM_TIMES") == "1" {
		what := "layout " + layout
		if run.HostTurn {
			what = "a host turn"
		}
		errf("bed: %s asks for %s", filepath.Base(run.Argv[0]), what)
	}
	select {
	case s.mu <- struct{}{}:
		leave()
	case <-ctx.Done():
		leave()
		return
	}
	defer func() { <-s.mu }()
	logw := proto.Stream{W: w, Typ: proto.TLog}
	if run.HostTurn {
		// the caller's turn on the host: it ends when the caller hangs up
		if err := w.JSON(proto.TExit, proto.Exit{}); err != nil {
			return
		}
		t0 := time.Now()
		<-ctx.Done()
		if os.Getenv("RDMABENCH_VM_TIMES") == "1" {
			errf("bed: %s: %.1f s on the host", filepath.Base(run.Argv[0]), time.Since(t0).Seconds())
		}
		return
	}
	if s.bed != nil && s.bed.Layout != layout {
		fmt.Fprintf(logw, "vmexec: bed: switching from layout %s to %s\n", s.bed.Layout, layout)
		s.down()
	}
	if s.bed == nil {
		s.bed = s.takePreboot(ctx, layout, logw)
	}
	if s.bed == nil {
		if err := s.waitLock(ctx); err != nil {
			w.JSON(proto.TExit, proto.Exit{Code: exitCodeOf(err), Error: err.Error()})
			return
		}
		o := s.flags.opts
		o.Layout = layout
		o.Log = logw
		t0 := time.Now()
		bed, err := vm.Boot(ctx, o)
		if err != nil {
			w.JSON(proto.TExit, proto.Exit{Code: exitCodeOf(err), Error: err.Error()})
			return
		}
		s.lk.Lock()
		s.boots++
		n := s.boots
		s.lk.Unlock()
		note(logw, "bed: %s layout up in %.1f s (boot %d)", layout, time.Since(t0).Seconds(), n)
		s.bed = bed
	}
	s.ahead(false)
	g, err := s.bed.Guest(run.Guest)
	if err != nil {
		w.JSON(proto.TExit, proto.Exit{Code: 2, Error: err.Error()})
		return
	}
	run.Layout, run.Guest = "", ""
	t0 := time.Now()
	e, err := g.Run(ctx, run, proto.Stream{W: w, Typ: proto.TStdout}, proto.Stream{W: w, Typ: proto.TStderr}, sigs)
	if os.Getenv("RDMABENCH_VM_TIMES") == "1" {
		note(logw, "bed: %s: %s: %.1f s in the guest", g.Name, filepath.Base(run.Argv[0]), time.Since(t0).Seconds())
	}
	ran := time.Since(t0)
	if err != nil {
		var ge *vm.GuestError
		if errors.As(err, &ge) {
			s.down() // boot a fresh one for the next request
		}
		w.JSON(proto.TExit, proto.Exit{Code: exitCodeOf(err), Error: err.Error()})
		s.next(ran, false)
		return
	}
	w.JSON(proto.TExit, e)
	s.next(ran, e.Code == 0)
}

func exitCodeOf(err error) int {
	var ge *vm.GuestError
	var te *vm.TimeoutError
	switch {
	case errors.As(err, &te), errors.Is(err, context.DeadlineExceeded):
		return 124
	case errors.As(err, &ge):
		return 125
	case errors.Is(err, vm.ErrUsage), errors.Is(err, vm.ErrPrereq):
		return 2
	}
	return 125
}

func cmdWaitListen(args []string) int {
	if len(args) < 1 || len(args) > 2 {
		return code(fmt.Errorf("%w: wait-listen PORT [SECS]", vm.ErrUsage))
	}
	port, err := strconv.Atoi(args[0])
	if err != nil || port < 1 || port > 65535 {
		return code(fmt.Errorf("%w: wait-listen: PORT must be 1..65535, got %s", vm.ErrUsage, args[0]))
	}
	secs := 60
	if len(args) == 2 {
		if secs, err = strconv.Atoi(args[1]); err != nil || secs < 1 {
			return code(fmt.Errorf("%w: wait-listen: SECS must be a positive integer, got %s", vm.ErrUsage, args[1]))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
	defer cancel()
	if err := vm.WaitListen(ctx, port); err != nil {
		errf("wait-listen: nothing listens on TCP port %d after %d s", port, secs)
		return 1
	}
	return 0
}
