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
	{"base", Pure, []string{
		"hist", "bench/proto", "bench/perftest/wire", "bench/knee", "verbs/linkspeed",
		"internal/cloop", "internal/operr", "internal/version", "internal/golden", "internal/vm/proto",
	}},
	{"records", Pure, []string{
		"bench/result", "bench/admit", "bench/auth", "bench/drain", "internal/numa",
		"internal/vm", "internal/testutil/vmtest",
	}},
	{"definitions", Pure, []string{
		"bench/spec", "bench/report", "bench/timeline", "bench/doctor",
		"bench/result/schema", "bench/result/resulttest",
	}},
	{"host and documents", Pure, []string{
		"bench/hostenv", "bench/perftest", "bench/compare", "bench/plot", "internal/exptool/meshcheck",
	}},
	{"analyses", Pure, []string{
		"bench/fabric", "internal/exptool/losstail", "internal/exptool/wirebw", "internal/vsperftest",
		"internal/e2e/exp/expkit",
	}},
	{"pure commands", Pure, []string{
		"scripts/dropinagree", "scripts/jcheck", "scripts/losstail", "scripts/meshcheck",
		"scripts/vmexec", "scripts/vsperftest", "scripts/wirebw",
	}},
	{"native", Cgo, []string{
		"verbs", "bench/sockeng", "bench/mesh/boot",
	}},
	{"on verbs", Cgo, []string{
		"bench/cmchan", "bench/spread", "internal/testutil",
	}},
	{"engine", Cgo, []string{
		"bench",
	}},
	{"run lists", Cgo, []string{
		"bench/runlist",
	}},
	{"subcommands", Cgo, []string{
		"bench/cliffs", "bench/isolation", "bench/mesh", "bench/mr",
	}},
	{"cmd", Cgo, []string{
		"cmd/rdmabench",
	}},
	{"tests", TestOnly, []string{
		"docs", "internal/buildcheck", "internal/e2e", "internal/e2e/exp", "internal/e2e/exp/mesh",
		"internal/e2e/exp/pair", "internal/e2e/faults", "internal/e2e/pair", "scripts/scripttest",
	}},
}
