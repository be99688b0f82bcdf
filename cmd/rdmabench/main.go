// Command rdmabench measures RDMA SEND, WRITE and READ latency percentiles
// and bandwidth over real queue pairs. Run 'rdmabench help' for usage.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/rdmabench/rdmabench/bench/auth"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/dropin"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/expect"
	"github.com/rdmabench/rdmabench/bench/isolation"
	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/mesh/boot"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/sockeng"
	"github.com/rdmabench/rdmabench/verbs"
)

// Exit codes: one table, exitCodes (exitcodes.go), makes helpExitCodes (in
// --help and the rdmabench.1 man page) and docs/exit-codes.md's table;
// TestExitCodeTable keeps it in step with these constants; TestExitCodes
// runs a case of each code it can reach without RDMA.
const (
	exitOK         = 0   // success; compare --baseline: no regression
	exitFail       = 1   // any other failure; compare --baseline: a regression past the gate
	exitUsage      = 2   // bad flags or values (checked before any test), unknown device, port or GID index, unwritable --json
	exitEnv        = 3   // what this machine or device lacks: no RDMA, no device, port down, memlock, a device limit (max_qp_wr, max_cqe, max_inline_data, max_mr_size), a resource budget (this side's or the server's --max-memory/--max-qps)
	exitPeer       = 4   // control connection, handshake, errors the peer reports, a server lost mid-test (closed, no heartbeat)
	exitTransport  = 5   // completion errors, data-path timeouts, payloads that fail --verify, fatal async events
	exitPartial    = 6   // mesh: the document was written, but some pairs failed or a rank was lost
	exitTimeout    = 7   // --run-timeout expired (finished results kept, JSON "partial": true)
	exitInput      = 8   // compare, plot, report, import: an input file that cannot be read, is not an rdmabench document or holds impossible values
	exitBlind      = 9   // compare --baseline --require-power: no regression, but the runs could not show a change of the limit's size; a limit n/a on both sides
	exitDoctor     = 10  // doctor: a check failed (its findings are printed and written)
	exitExpectFail = 11  // --expect-bw/--expect-lat: a bound's whole interval misses it; accept: a NIC failed
	exitExpectTell = 12  // --expect-bw/--expect-lat: no bound failed, but one could not be told (its interval straddles it, or there is none)
	exitInterrupt  = 130 // interrupted by SIGINT (128+2); finished results kept, JSON "partial": true
	exitTerminated = 143 // terminated by SIGTERM (128+15); likewise
)

// usageError marks bad command-line input (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// blindError is a gate that could not see (exit 9): compare's verdict
// compare.Blind.
type blindError struct{ err error }

func (e blindError) Error() string { return e.err.Error() }
func (e blindError) Unwrap() error { return e.err }

func main() {
	if code, ok := dropIn(os.Args); ok { // invoked as ib_send_lat etc.: dropin.go, bench/dropin
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args (without the program name) and
// returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	root, state := newRoot(stdout, stderr)
	if len(args) == 0 { // a command is required: the help, on stderr, exit 2
		root.SetOut(stderr)
		root.Help()
		return exitUsage
	}
	if err := setInputLimit(); err != nil {
		fmt.Fprintf(stderr, "rdmabench: %s\n", err)
		return exitUsage
	}
	ctx, stop := signalContext()
	defer stop()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if !state.started { // cobra refused the command line: an unknown command or flag, bad operands
		err = usageError{err}
	}
	var se *signalError
	if errors.Is(err, context.Canceled) && !errors.As(err, &se) {
		fmt.Fprintln(stderr, "rdmabench: interrupted")
	} else {
		fmt.Fprintf(stderr, "rdmabench: %s\n", strings.TrimRight(err.Error(), "\n"))
	}
	if !state.started && cmd != nil {
		if cmd.Name() == "help" {
			cmd = cmd.Root()
		}
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return exitCode(err)
}

func exitCode(err error) int {
	var ue usageError
	var due dropin.UsageError
	var nf *verbs.DeviceNotFoundError
	var me *verbs.MemlockError
	var wce *verbs.WCError
	var re *proto.RemoteError
	var pe *proto.Error
	var ne *net.OpError
	var ve *verbs.Error
	var vfe *kinds.VerifyError
	var aue *auth.Error
	var se *signalError
	var rte *runTimeoutError
	var pl *kinds.PeerLostError
	var ae *verbs.AsyncEventError
	var pme partialError
	var be *boot.OpError
	var ie inputError
	var rie *result.InputError
	var ble blindError
	var dfe doctorFailed
	var iue *isolation.UnjudgedError
	var efe *expect.FailError
	var ete *expect.CannotTellError
	switch {
	case errors.As(err, &efe):
		return exitExpectFail
	case errors.As(err, &ete):
		return exitExpectTell
	case errors.As(err, &dfe):
		return exitDoctor
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
	case errors.As(err, &be):
		return exitPeer // the launcher's PMI server failed or timed out
	case errors.As(err, &ie), errors.As(err, &rie):
		return exitInput
	case errors.As(err, &ble), errors.As(err, &iue):
		return exitBlind // the gate could not see: compare's verdict blind, isolation --max-inflation n/a
	case errors.As(err, &ue), errors.As(err, &due), errors.As(err, &nf):
		return exitUsage
	case endpoint.IsOverBudget(err): // this side's budget or the server's: before the peer's other errors
		return exitEnv
	case device.IsLimit(err): // this side's device or the server's (mlx5's WQE sizing within max_qp_wr)
		return exitEnv
	case errors.As(err, &ve) && (ve.Op == "GID index" || ve.Op == "ibv_query_port") && errors.Is(err, syscall.EINVAL):
		return exitUsage // a port or GID index the device does not have
	case errors.Is(err, verbs.ErrNoKernelSupport), errors.Is(err, verbs.ErrNoDevices), errors.Is(err, verbs.ErrNoProvider),
		errors.As(err, &me), errors.Is(err, verbs.ErrNotSupported), errors.Is(err, device.ErrPortNotActive):
		return exitEnv
	case errors.As(err, &wce), errors.As(err, &vfe), errors.Is(err, verbs.ErrTimeout), errors.Is(err, sockeng.ErrTimeout),
		errors.Is(err, sockeng.ErrPeerClosed):
		return exitTransport
	case errors.As(err, &re), errors.As(err, &pe), errors.As(err, &ne), errors.As(err, &aue):
		return exitPeer
	}
	return exitFail
}
