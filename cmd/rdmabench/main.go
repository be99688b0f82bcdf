// Command rdmabench measures RDMA SEND, WRITE and READ latency percentiles
// and bandwidth over real queue pairs. Run 'rdmabench help' for usage.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/compare"
	"github.com/rdmabench/rdmabench/bench/mesh/boot"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/sockeng"
	"github.com/rdmabench/rdmabench/verbs"
)

// Exit codes: one table, docs/exit-codes.md and the usage text, kept in
// step with these constants by TestExitCodeTable; TestExitCodes runs a
// case of each code it can reach without RDMA.
const (
	exitOK         = 0   // success; compare --baseline: no regression
	exitFail       = 1   // any other failure; compare --baseline: a regression past the gate
	exitUsage      = 2   // bad flags or values (checked before any test), unknown device, port or GID index, unwritable --json
	exitEnv        = 3   // what this machine or device lacks: no RDMA, no device, port down, memlock, a device limit (max_qp_wr, max_cqe, max_inline_data, max_mr_size), a resource budget (this side's or the server's --max-memory/--max-qps)
	exitPeer       = 4   // control connection, handshake, errors the peer reports, a server lost mid-test (closed, no heartbeat)
	exitTransport  = 5   // completion errors, data-path timeouts, payloads that fail --verify, fatal async events
	exitPartial    = 6   // mesh: the document was written, but some pairs failed or a rank was lost
	exitTimeout    = 7   // --run-timeout expired (finished results kept, JSON "partial": true)
	exitInterrupt  = 130 // interrupted by SIGINT (128+2); finished results kept, JSON "partial": true
	exitTerminated = 143 // terminated by SIGTERM (128+15); likewise
)

const usage = `rdmabench: RDMA verbs latency percentiles and bandwidth (SEND, WRITE, READ)

Usage:
  rdmabench devices [--json]              list devices, ports and GID tables
  rdmabench server [flags]                answer clients (options come from the client)
  rdmabench run HOST [flags]              run tests against 'rdmabench server' on HOST
  rdmabench loopback [flags]              run both ends in this process on one device
  rdmabench mesh [flags]                  under mpiexec or srun: all-pairs fabric map (latency matrix, outliers)
  rdmabench mr [flags]                    memory registration cost: reg/dereg latency per size, pooled vs per-op WRITE
  rdmabench compare A.json B.json ...     compare result files; --baseline gates regressions
  rdmabench plot A.json [B.json ...] -o F.svg|F.png   latency distributions, CDFs, size sweeps
  rdmabench report FILES... [--format markdown] [--plot F.svg]   fabrics side by side (RoCE, iWARP, TCP), ratios to TCP
  rdmabench version

Run 'rdmabench COMMAND --help' for the flags of a command.

Exit codes (docs/exit-codes.md):
  0    success (compare --baseline: no regression)
  1    any other failure (compare --baseline: a regression)
  2    usage: a bad flag or value, found before any test
  3    environment: no RDMA or device, port down, memlock, a device limit, a resource budget (--max-memory, --max-qps; ours or the server's)
  4    peer: control connection, handshake, errors the peer reports
  5    transport: completion errors, data-path timeouts, --verify mismatches
  6    partial: rdmabench mesh wrote its document, but some pairs failed or a rank was lost
  7    run timeout: --run-timeout expired (finished results kept, JSON "partial": true)
  130  interrupted (SIGINT)
  143  terminated (SIGTERM)
`

// usageError marks bad command-line input (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	if code, ok := dropIn(os.Args); ok { // invoked as ib_send_lat etc.: dropin.go
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	ctx, stop := signalContext()
	defer stop()
	var err error
	switch args[0] {
	case "devices":
		err = cmdDevices(args[1:], stdout)
	case "server":
		err = cmdServer(ctx, args[1:], stderr)
	case "run":
		err = cmdRun(ctx, args[1:], stdout, stderr, false)
	case "loopback":
		err = cmdRun(ctx, args[1:], stdout, stderr, true)
	case "compare":
		err = cmdCompare(args[1:], stdout, stderr)
	case "plot":
		err = cmdPlot(args[1:], stdout, stderr)
	case "report":
		err = cmdReport(args[1:], stdout, stderr)
	case "mr":
		err = cmdMR(ctx, args[1:], stdout, stderr)
	case "mesh":
		err = cmdMesh(ctx, args[1:], stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "rdmabench %s\n", bench.Version)
	default:
		err = usageError{fmt.Errorf("unknown command %q", args[0])}
	}
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var se *signalError
	if errors.Is(err, context.Canceled) && !errors.As(err, &se) {
		fmt.Fprintln(stderr, "rdmabench: interrupted")
	} else {
		fmt.Fprintf(stderr, "rdmabench: %v\n", err)
	}
	return exitCode(err)
}

func exitCode(err error) int {
	var ue usageError
	var nf *verbs.DeviceNotFoundError
	var me *verbs.MemlockError
	var wce *verbs.WCError
	var re *proto.RemoteError
	var pe *proto.Error
	var ne *net.OpError
	var ve *verbs.Error
	var vfe *bench.VerifyError
	var auth *bench.AuthError
	var se *signalError
	var rte *runTimeoutError
	var pl *bench.PeerLostError
	var ae *verbs.AsyncEventError
	var pme partialError
	var mre *compare.MeshRegressionError
	var be *boot.OpError
	switch {
	case errors.As(err, &se):
		if se.sig == syscall.SIGTERM {
			return exitTerminated
		}
		return exitInterrupt
	case errors.As(err, &rte):
		return exitTimeout
	case errors.As(err, &pl):
		return exitPeer
	case errors.As(err, &ae):
		return exitTransport
	case errors.As(err, &pme):
		return exitPartial
	case errors.As(err, &mre):
		return exitFail // the mesh gate: regressed pairs
	case errors.As(err, &be):
		return exitPeer // the launcher's PMI server failed or timed out
	case errors.As(err, &ue), errors.As(err, &nf):
		return exitUsage
	case bench.IsOverBudget(err): // this side's budget or the server's: before the peer's other errors
		return exitEnv
	case errors.As(err, &ve) && (ve.Op == "GID index" || ve.Op == "ibv_query_port") && errors.Is(err, syscall.EINVAL):
		return exitUsage // a port or GID index the device does not have
	case errors.Is(err, verbs.ErrNoKernelSupport), errors.Is(err, verbs.ErrNoDevices), errors.Is(err, verbs.ErrNoProvider),
		errors.As(err, &me), errors.Is(err, verbs.ErrNotSupported), errors.Is(err, bench.ErrPortNotActive):
		return exitEnv
	case errors.As(err, &wce), errors.As(err, &vfe), errors.Is(err, verbs.ErrTimeout), errors.Is(err, sockeng.ErrTimeout),
		errors.Is(err, sockeng.ErrPeerClosed):
		return exitTransport
	case errors.As(err, &re), errors.As(err, &pe), errors.As(err, &ne), errors.As(err, &auth):
		return exitPeer
	}
	return exitFail
}

func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SortFlags = false
	return fs
}

func parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	return nil
}

func cmdDevices(args []string, stdout io.Writer) error {
	fs := newFlags("devices")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, os.Stderr); err != nil {
		return err
	}
	reps, err := bench.DescribeDevices()
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(reps)
	}
	return bench.WriteDevices(stdout, reps)
}

// deviceFlags are the flags naming the local device, port and GID.
type deviceFlags struct {
	device   string
	port     int
	gidIndex int
}

func (d *deviceFlags) add(fs *flag.FlagSet) {
	fs.StringVarP(&d.device, "ib-dev", "d", "", "RDMA device (default: by route, the device whose GID table holds this side's control address); run and loopback take a list, dev1,dev2, and run the tests once per device")
	fs.IntVarP(&d.port, "ib-port", "i", 1, "device port")
	fs.IntVarP(&d.gidIndex, "gid-index", "x", -1, "GID index (default: auto, a RoCE v2 GID matching the control connection's address)")
}

func cmdServer(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlags("server")
	var d deviceFlags
	d.add(fs)
	bind := fs.String("bind", "", "address to listen on (default: all addresses, serving loopback clients only unless there is a key: "+
		"protected mode); an explicit --bind serves any client that reaches it")
	port := fs.IntP("port", "p", bench.DefaultPort, "TCP control port")
	cpuList := fs.String("cpu", "", "pin the responder thread to this CPU")
	var nf numaFlags
	nf.add(fs, "the responder threads")
	keyFile := addKeyFlag(fs, "that clients must prove they hold")
	allow := fs.String("allow", "", "admit only clients from these CIDR prefixes or addresses (comma-separated, e.g. 10.0.0.0/8,192.0.2.7); checked at accept")
	idle := fs.Duration("idle-timeout", bench.DefaultIdleTimeout, "close a session that sends nothing for this long between tests")
	maxSession := fs.Duration("max-session", 0, "close a session this long after it opened, aborting its test (0: no limit)")
	var bud budgetFlags
	bud.add(fs, true)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: rdmabench server [flags]\n\n"+
			"One client's tests at a time. A client that sends no heartbeat for %v during a test\n"+
			"(dead, stopped or silent) is dropped and the next client served; every handshake must be\n"+
			"done within %v, at most %d at once. SIGINT/SIGTERM abort the running test and exit within 2 s.\n\n",
			bench.HeartbeatTimeout(), bench.HandshakeTimeout(), bench.MaxHandshakes())
		fs.PrintDefaults()
	}
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if err := d.check(fs); err != nil {
		return err
	}
	budget, err := bud.budget()
	if err != nil {
		return err
	}
	numaChoice, err := nf.choice(fs)
	if err != nil {
		return err
	}
	key, err := loadKey(*keyFile, stderr)
	if err != nil {
		return err
	}
	var nets []netip.Prefix
	if fs.Changed("allow") {
		if nets, err = bench.ParseAllow(*allow); err != nil {
			return usageError{fmt.Errorf("--allow %q: %w", *allow, err)}
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
		min  time.Duration
	}{{"idle-timeout", *idle, time.Second}, {"max-session", *maxSession, 0}} {
		if f.v < f.min {
			return usageError{fmt.Errorf("--%s %v: must be at least %v", f.name, f.v, f.min)}
		}
	}
	if strings.Contains(d.device, ",") {
		return usageError{fmt.Errorf("server -d %s: a server serves on one device (or, without -d, on the device each client's route reaches)", d.device)}
	}
	var cpus []int
	if *cpuList != "" {
		if cpus, err = bench.ParseCPUs(*cpuList, runtime.NumCPU()); err != nil {
			return usageError{fmt.Errorf("--cpu: %w", err)}
		}
	}
	if *port < 1 || *port > 65535 {
		return usageError{fmt.Errorf("control port %d out of range 1..65535", *port)}
	}
	lg := log.New(stderr, "rdmabench server: ", log.LstdFlags)
	lg.Printf("budget: %s", budget)
	ctx, stop := serverContext(ctx, lg)
	defer stop()
	return bench.ListenAndServe(ctx, net.JoinHostPort(*bind, strconv.Itoa(*port)),
		bench.ServerConfig{Device: d.device, Port: d.port, GIDIndex: d.gidIndex, Log: lg, CPUs: cpus, Budget: budget,
			AuthKey: key, Exposed: fs.Changed("bind"), Allow: nets, IdleTimeout: *idle, MaxSession: *maxSession, NUMA: numaChoice})
}
