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
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench"
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
	exitPeer       = 4   // control connection, handshake, errors the peer reports
	exitTransport  = 5   // completion errors, data-path timeouts, payloads that fail --verify
	exitInterrupt  = 130 // interrupted by SIGINT (128+2)
	exitTerminated = 143 // terminated by SIGTERM (128+15)
)

const usage = `rdmabench: RDMA verbs latency percentiles and bandwidth (SEND, WRITE, READ)

Usage:
  rdmabench devices [--json]              list devices, ports and GID tables
  rdmabench server [flags]                answer clients (options come from the client)
  rdmabench run HOST [flags]              run tests against 'rdmabench server' on HOST
  rdmabench loopback [flags]              run both ends in this process on one device
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
  130  interrupted (SIGINT)
  143  terminated (SIGTERM)
`

// usageError marks bad command-line input (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
	case "version":
		fmt.Fprintf(stdout, "rdmabench %s\n", bench.Version)
	default:
		err = usageError{fmt.Errorf("unknown command %q", args[0])}
	}
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if errors.Is(err, context.Canceled) {
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
	switch {
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
	case errors.As(err, &re), errors.As(err, &pe), errors.As(err, &ne):
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
	bind := fs.String("bind", "", "address to listen on (default: all addresses)")
	port := fs.IntP("port", "p", bench.DefaultPort, "TCP control port")
	cpuList := fs.String("cpu", "", "pin the responder thread to this CPU")
	var nf numaFlags
	nf.add(fs, "the responder threads")
	var bud budgetFlags
	bud.add(fs, true)
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
	return bench.ListenAndServe(ctx, net.JoinHostPort(*bind, strconv.Itoa(*port)),
		bench.ServerConfig{Device: d.device, Port: d.port, GIDIndex: d.gidIndex, Log: lg, CPUs: cpus, Budget: budget, NUMA: numaChoice})
}
