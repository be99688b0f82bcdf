package buildcheck

// Kind says what a layer's packages may depend on.
type Kind string

const (
	// Pure: no cgo anywhere under the package (no package of the module
	// with cgo files or importing "C" among its dependencies, verbs
	// included); every one builds with CGO_ENABLED=0, so results can be
	// read, compared and plotted on a machine without rdma-core.
	Pure Kind = "pure"
	// Cgo: the package may use cgo or depend on a package that does.
	Cgo Kind = "cgo"
	// TestOnly: packages that hold tests (and what only their tests
	// read); nothing imports them.
	TestOnly Kind = "tests"
)

// Layer is one row of the layer table: packages that are siblings. A
// package imports only packages of lower layers, never one of its own
// layer nor of a higher one. Test files are outside the rule: a test may
// import any package.
type Layer struct {
	Name string
	Kind Kind
	// About is what the layer holds, one line for the docs' table.
	About string
	// Pkgs are import paths relative to the module.
	Pkgs []string
}

// Module is the module path.
const Module = "github.com/rdmabench/rdmabench"

// Layers is the layer table, bottom first: every package of the module is
// in exactly one layer. docs/architecture.md ("Layers") shows the same
// table top first; TestLayersDoc holds the two together and TestLayers
// holds the code to it.
var Layers = []Layer{
	{
		Name: "base", Kind: Pure,
		About: "imports nothing of the module: histograms, the control protocol's frames, perftest's exchange, the knee detector, link speeds, the C loops' header, operation errors, the build's version, golden files, the tests' hooks in the code under them, the test bed's protocol",
		Pkgs: []string{
			"hist", "bench/proto", "bench/perftest/wire", "bench/knee", "verbs/linkspeed",
			"internal/cloop", "internal/operr", "internal/version", "internal/golden", "internal/testhook", "internal/vm/proto",
		},
	},
	{
		Name: "records", Kind: Pure,
		About: "the result document, the server's admission and authentication, the senders' sample drainer, the test kinds' control channel, NUMA topology, the guest test bed, test helpers: a listener whose clients come \"from\" any address, a log a test waits on",
		Pkgs: []string{
			"bench/result", "bench/admit", "bench/auth", "bench/drain", "bench/ctrl", "internal/numa",
			"internal/vm", "internal/testutil/vmtest", "internal/testutil/peerln", "internal/testutil/logbuf",
		},
	},
	{
		Name: "definitions", Kind: Pure,
		About: "what one test is (`bench/spec`) and what reads a document: text reports, counter timelines, doctor's checks, schema validation, test corpora; a test's status line",
		Pkgs: []string{
			"bench/spec", "bench/report", "bench/timeline", "bench/doctor",
			"bench/result/schema", "bench/result/resulttest", "bench/statusline",
		},
	},
	{
		Name: "host and documents", Kind: Pure,
		About: "the host's facts and checks, the perftest drop-in's pure half, comparison and the gate, expectations, plots, the mesh check",
		Pkgs: []string{
			"bench/hostenv", "bench/perftest", "bench/compare", "bench/expect", "bench/plot", "internal/exptool/meshcheck",
		},
	},
	{
		Name: "analyses", Kind: Pure,
		About: "`rdmabench report` (fabrics side by side) and the experiments' analysis libraries",
		Pkgs: []string{
			"bench/fabric", "internal/exptool/losstail", "internal/exptool/wirebw", "internal/vsperftest",
			"internal/e2e/exp/expkit",
		},
	},
	{
		Name: "pure commands", Kind: Pure,
		About: "the scripts' programs and the bed's `vmexec`, built with CGO_ENABLED=0",
		Pkgs: []string{
			"scripts/dropinagree", "scripts/jcheck", "scripts/losstail", "scripts/meshcheck",
			"scripts/vmexec", "scripts/vsperftest", "scripts/wirebw",
		},
	},
	{
		Name: "native", Kind: Cgo,
		About: "the C bindings: libibverbs and librdmacm, the TCP baseline's loop, libpmix (with `-tags pmix`), the loops' clock and its calibration",
		Pkgs: []string{
			"verbs", "bench/sockeng", "bench/mesh/boot", "internal/clock",
		},
	},
	{
		Name: "on verbs", Kind: Cgo,
		About: "helpers over verbs: the rdma_cm message channel, the workload knobs' memory, the RDMA tests' helpers",
		Pkgs: []string{
			"bench/cmchan", "bench/spread", "internal/testutil",
		},
	},
	{
		Name: "device and route", Kind: Cgo,
		About: "which device, port and GID a side uses (by route, `--ib-dev` or the first active port) and its facts: limits, inline probe, NUMA placement and the `--cpu` plan, fatal async events, port counters, the environment, `rdmabench devices`",
		Pkgs: []string{
			"bench/device",
		},
	},
	{
		Name: "queue pairs and memory", Kind: Cgo,
		About: "one side's QPs of a test and their registered memory: endpoints, memory pools, shared receive queues, the resource budget, rdma_cm's connection of the QPs",
		Pkgs: []string{
			"bench/endpoint",
		},
	},
	{
		Name: "measurement", Kind: Cgo,
		About: "the client's measurement loops around the C engines: latency, a bandwidth sender's phases and its sample drainer, intervals, the status line, thread pinning",
		Pkgs: []string{
			"bench/measure",
		},
	},
	{
		Name: "test kinds", Kind: Cgo,
		About: "the test kinds, one type each with its client half and its server half, talking through the control channel: latency, bandwidth, several QPs, latency under load, bidirectional, the TCP baseline, the verify pass; the server's responder loops, the watch and heartbeats of a running test",
		Pkgs: []string{
			"bench/kinds",
		},
	},
	{
		Name: "server", Kind: Cgo,
		About: "`rdmabench server`: the accept loop and admission, sessions, the server's side of each test up to its kind",
		Pkgs: []string{
			"bench/server",
		},
	},
	{
		Name: "engine", Kind: Cgo,
		About: "the client facade: dial, run, loopback, run lists; beside it the drop-in's side facing perftest",
		Pkgs: []string{
			"bench", "bench/dropin/peer",
		},
	},
	{
		Name: "run lists", Kind: Cgo,
		About: "a list of tests in one client run",
		Pkgs: []string{
			"bench/runlist",
		},
	},
	{
		Name: "subcommands", Kind: Cgo,
		About: "`rdmabench accept`, `cliffs`, `isolation`, `mesh`, `mr`, and the perftest drop-in (`ib_send_lat`, ...)",
		Pkgs: []string{
			"bench/accept", "bench/cliffs", "bench/dropin", "bench/isolation", "bench/mesh", "bench/mr",
		},
	},
	{
		Name: "cmd", Kind: Cgo,
		About: "the CLI: the command tree, its flags, exit codes",
		Pkgs: []string{
			"cmd/rdmabench",
		},
	},
	{
		Name: "tests", Kind: TestOnly,
		About: "packages of tests only: the docs' code blocks, the build graph, end-to-end runs, the experiments",
		Pkgs: []string{
			"docs", "internal/buildcheck", "internal/e2e", "internal/e2e/exp", "internal/e2e/exp/mesh",
			"internal/e2e/exp/pair", "internal/e2e/faults", "internal/e2e/pair", "scripts/scripttest",
		},
	},
}
