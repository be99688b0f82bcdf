package main

import (
	"fmt"
	"strings"
)

// exitCodeInfo is one exit code: its constant (main.go), its line in
// --help and rdmabench(1), and its row of docs/exit-codes.md (Markdown).
type exitCodeInfo struct {
	code     int
	name     string // the constant's name
	help     string // the --help line
	meaning  string
	examples string
}

// exitCodes is the one table of the exit codes: --help, the man page and
// docs/exit-codes.md (rdmabench gen-docs) are made from it;
// TestExitCodeTable holds it to main.go's constants.
var exitCodes = []exitCodeInfo{
	{exitOK, "exitOK",
		"success (compare --baseline: no regression)",
		"success",
		"a run that completed; `compare --baseline` without a regression"},
	{exitFail, "exitFail",
		"failure: compare --baseline found a regression, or the new run lacks tests or is partial; any failure without a code of its own",
		"a regression found by the gate, or a failure without a code of its own",
		"`compare --baseline` with a regression past `--max-regress` or `--max-counter`, or a new run that lacks tests of the baseline or is partial (without `--subset`); the mesh gate's regressed pairs; `isolation --max-inflation` crossed (an interval's lower end above a bound, [isolation.md](isolation.md#the-exit-rule---max-inflation))"},
	{exitUsage, "exitUsage",
		"usage: a bad flag or value, found before any test",
		"bad command-line input, found before any device is opened or test run",
		"an unknown flag or command; `--rate NaN`, `--rate 0.001` (below 1 op/s), `--warmup -7`, `-x -1`, `--cpu 9223372036854775806-9223372036854775807`; an unwritable `--json` path; an unknown device, port or GID index"},
	{exitEnv, "exitEnv",
		"environment: no RDMA or device, port down, memlock, a device limit, a resource budget (--max-memory, --max-qps; ours or the server's)",
		"what this machine, its device or a budget does not allow",
		"no RDMA in the kernel, no device, port down, RLIMIT_MEMLOCK; a device limit (`--tx-depth` above `max_qp_wr` or `max_cqe`, `--inline-size` above what the device grants, a size above `max_mr_size`); a test over a resource budget: this side's `--max-memory` (e.g. `loopback --size 1G --mode bw`) or the server's `--max-memory`/`--max-qps` (the server refuses it with the figures)"},
	{exitPeer, "exitPeer",
		"peer: control connection, handshake, errors the peer reports",
		"the control connection or the peer failed",
		"server not reachable, handshake, authentication (a wrong key, or a key on one side only), the server's protected mode or `--allow` refusing the client, a busy server, a server refusing one more unauthenticated connection from the client's address (`--max-startups-per-addr`) or dropping it as the oldest (`--max-startups`), protocol errors, an error the peer reports; a server lost in the middle of a test: its control connection closed (`kill -9`) or its heartbeat stopped (SIGSTOP), RDMA or TCP baseline"},
	{exitTransport, "exitTransport",
		"transport: completion errors, data-path timeouts, --verify mismatches",
		"the data path failed",
		"completion errors, no progress within the engine timeout, `--verify` mismatches; a fatal asynchronous event (`async event IBV_EVENT_PORT_ERR on rxe1 port 1`, QP/CQ/SRQ/device errors)"},
	{exitPartial, "exitPartial",
		"partial: rdmabench mesh wrote its document, but some pairs failed or a rank was lost",
		"`rdmabench mesh` finished, partly",
		"rank 0 wrote the document, but some pairs failed or a rank was lost (other ranks: one of their own pairs failed, or their report did not reach rank 0)"},
	{exitTimeout, "exitTimeout",
		"run timeout: --run-timeout expired (finished results kept, JSON \"partial\": true)",
		"`--run-timeout` expired",
		"the running test was aborted; the finished results are printed and written with `\"partial\": true`"},
	{exitInput, "exitInput",
		"input: compare, plot, report or import could not read an input file, it is too large, not the kind of document read, or a value breaks an invariant (file, JSON path and rule named)",
		"an input file that cannot be read, is not the kind of document the command reads, is larger than the input limit, or holds a value no real run produces",
		"`compare`, `plot`, `report` or `import` given a missing file, a file that is not JSON, a document without `schema_version` or of another schema version, another kind of document (`a doctor document, not a result document`), a file over the input limit (32 MiB, `RDMABENCH_MAX_INPUT_BYTES`); any document (results, mesh, cliffs, isolation, doctor, mr, an import) that breaks an invariant of [output.md](output.md#what-a-reader-accepts): an op, mode, QP type or unit outside the vocabulary, a size, count, duration or rate out of range, a latency `count` of 0 with values, percentiles out of order or outside min..max, the same test twice, no results, a histogram that does not decode or disagrees with its count: the file, the JSON path, the value and the rule named (`results[3].latency_ns.p99: impossible value: 100 ns is below p90's 1500 ns (out of order)`); `import perftest` given output with `inf`/`nan`, a table line that is not a perftest row, or no result table"},
	{exitBlind, "exitBlind",
		"underpowered: compare --baseline --require-power found no regression, but the runs could not show a change of a limit's size; or a limit is n/a in both runs (cannot tell)",
		"the gate could not see (`compare --baseline --require-power`; a limit n/a on both sides)",
		"a `--max-regress` limit that no test could judge because its figure is n/a in both runs (\"cannot tell\"); no regression was found, but a figure's smallest detectable change exceeds its `--max-regress` limit (the `UNDERPOWERED` lines), or a test ran once, so its noise cannot be judged, or a figure had too few backed runs to estimate it; a regression still exits 1 ([statistics.md](statistics.md#can-the-gate-see)); `isolation --max-inflation` with no bound crossed but one that could not be judged (a percentile n/a, no interval)"},
	{exitDoctor, "exitDoctor",
		"doctor: a check failed (the table and --json say which, with the fix)",
		"`rdmabench doctor` found a check that failed",
		"a RoCE MTU that differs between the ends (`doctor HOST`), a port that is not ACTIVE, a PCIe link trained at fewer lanes, no RoCE v2 GID for an address (the table and `--json` name each check and its fix; [doctor.md](doctor.md))"},
	{exitExpectFail, "exitExpectFail",
		"expectation failed: an --expect-bw/--expect-lat bound's whole 95% interval misses it; accept: a NIC failed",
		"an expectation was not met, and the interval shows it",
		"`loopback --mode bw --repeat 5 --expect-bw 375Gb/s` whose bandwidth interval lies wholly below 375 Gb/s; `--expect-lat p50=2.5us` whose p50 interval lies wholly above 2.5 us; `rdmabench accept` with a NIC that failed a check or a bound ([node-bringup.md](node-bringup.md))"},
	{exitExpectTell, "exitExpectTell",
		"expectation cannot be told: no bound failed, but an interval straddles one, or there is none (one run of a bandwidth test); the line names the --repeat that would settle it",
		"an expectation could not be judged either way",
		"no bound failed, but a figure's 95% interval straddles its bound (`cannot tell: ... --repeat 9 would settle it`), or has none: a single bandwidth run (`cannot tell: one run, no interval; use --repeat 5`), a percentile with too few samples, a port that reports no rate for `--expect-bw 90%`; `rdmabench accept` with no NIC failed but one that could not be told"},
	{exitInterrupt, "exitInterrupt",
		"interrupted (SIGINT)",
		"interrupted by SIGINT",
		"Ctrl-C during a run (a client run keeps its finished results, JSON `\"partial\": true`)"},
	{exitTerminated, "exitTerminated",
		"terminated (SIGTERM)",
		"terminated by SIGTERM",
		"`kill` during a run (likewise)"},
}

// helpExitCodes is the exit code table of 'rdmabench --help' and of the
// EXIT STATUS section of rdmabench(1), wrapped to defaultHelpWidth.
var helpExitCodes = exitCodeHelp(defaultHelpWidth)

// exitCodeHelp is the exit code table of --help, wrapped to width columns.
func exitCodeHelp(width int) string {
	var b strings.Builder
	b.WriteString("Exit codes (docs/exit-codes.md):\n")
	const indent = 7
	for _, e := range exitCodes {
		for i, line := range wrap(e.help, width-indent) {
			if i == 0 {
				fmt.Fprintf(&b, "  %-4d %s\n", e.code, line)
			} else {
				fmt.Fprintf(&b, "%*s%s\n", indent, "", line)
			}
		}
	}
	return b.String()
}

// exitCodeMarkdown is docs/exit-codes.md's table.
func exitCodeMarkdown() string {
	var b strings.Builder
	b.WriteString("| code | name | meaning | examples |\n|---|---|---|---|\n")
	for _, e := range exitCodes {
		fmt.Fprintf(&b, "| %d | `%s` | %s | %s |\n", e.code, e.name, e.meaning, e.examples)
	}
	return b.String()
}
