// Package vmtest is the test side of the guest bed (internal/vm, scripts/vmexec):
// a package declares the bed layout its tests need, finds out whether it runs in a
// guest, finds the rdmabench binary under test, and runs commands in the other
// guests of a pair or mesh bed. Pure Go: pure packages may import it.
//
// The contract with the bed:
//   - `go test -exec build/vmexec ./pkg` runs pkg's test binary once on the host
//     with QueryEnv=1 and -test.run=^$ to learn its layout (Layout prints it and
//     exits); then runs it in guest 1 of that layout.
//   - In a guest the agent sets GuestEnv (the guest's name: "g1", "g2", ...),
//     AddrEnv (its wire address, pair and mesh only) and PeersEnv (the other
//     guests as name=addr,name=addr).
package vmtest

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
)

// Environment variables between the bed and the tests.
const (
	QueryEnv  = "RDMABENCH_VM_QUERY"        // "1": print the layout and exit (host, before the guest boots)
	GuestEnv  = "RDMABENCH_GUEST"           // set in every guest: its name
	AddrEnv   = "RDMABENCH_ADDR"            // this guest's address on the wire (pair, mesh)
	PeersEnv  = "RDMABENCH_PEERS"           // the other guests: name=addr,name=addr
	BinEnv    = "RDMABENCH_BIN"             // the rdmabench binary under test (absolute path)
	LayoutTag = "rdmabench-vm-layout:"      // the line Layout prints in query mode
	GuestTag  = "rdmabench-vm-guest-tests:" // the line GuestTests prints in query mode
)

// Layouts the bed knows.
const (
	One  = "one"  // one guest: rxe0 on lo, rxe1 on dummy0 (192.0.2.1), siw1 on dummy1 (203.0.113.1)
	Pair = "pair" // two guests on a wire (198.51.100.1, .2), rxe2 on eth0 in each; the test runs in g1
	Mesh = "mesh" // three guests on one segment (198.51.100.1-3); the test runs in g1
	// Host: the package's tests need no RDMA device, though its test binary
	// links rdma-core. Under `vmexec --where auto` (make test) it runs on the
	// host, with RDMABENCH_REQUIRE_RDMA=1 so that an RDMA test added to it
	// fails there instead of skipping; elsewhere it runs in g1 of One.
	Host = "host"
)

// Layout declares the bed this package's tests need. Call it from an init
// function in a _test.go file; without it a package gets One.
func Layout(name string) {
	switch name {
	case One, Pair, Mesh, Host:
	default:
		panic(fmt.Sprintf("vmtest.Layout(%q): want %q, %q, %q or %q", name, One, Pair, Mesh, Host))
	}
	if os.Getenv(QueryEnv) == "1" {
		fmt.Println(LayoutTag + name) // the query runs -test.run=^$: no test runs
	}
}

// GuestTests declares that of this package's tests only those matching
// pattern (a -test.run expression) need the bed. Under `vmexec --where auto`
// (make test) the binary then runs twice: on the host with -test.skip
// pattern and RDMABENCH_REQUIRE_RDMA=1 (so an RDMA test the pattern misses
// fails there instead of skipping), and in the guest with -test.run pattern.
// Elsewhere the whole binary runs in the guest. Call it from an init
// function in a _test.go file, after Layout if the package has one.
func GuestTests(pattern string) {
	if os.Getenv(QueryEnv) == "1" {
		fmt.Println(GuestTag + pattern)
	}
}

// InGuest reports whether this process runs inside a guest of the bed.
func InGuest() bool { return os.Getenv(GuestEnv) != "" }

// Binary returns the rdmabench binary under test ($RDMABENCH_BIN). It fails
// the test where the variable is unset or names no executable.
func Binary(tb testing.TB) string {
	tb.Helper()
	p := os.Getenv(BinEnv)
	if p == "" {
		tb.Fatalf("%s is not set: the rdmabench binary under test (make sets it to build/rdmabench)", BinEnv)
	}
	if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
		tb.Fatalf("%s=%s: not an executable file (%v)", BinEnv, p, err)
	}
	return p
}

// Peer is another guest of a pair or mesh bed.
type Peer struct {
	Name string // "g2", "g3"
	Addr string // its wire address, e.g. 198.51.100.2
}

// Peers returns the other guests of the bed in order (pair: one, mesh: two).
// It fails the test outside such a bed.
func Peers(tb testing.TB) []Peer {
	tb.Helper()
	v := os.Getenv(PeersEnv)
	if v == "" {
		tb.Fatalf("%s is not set: this test needs a pair or mesh bed (vmtest.Layout)", PeersEnv)
	}
	var ps []Peer
	for _, f := range strings.Split(v, ",") {
		name, addr, ok := strings.Cut(f, "=")
		if !ok {
			tb.Fatalf("%s=%q: want name=addr,...", PeersEnv, v)
		}
		ps = append(ps, Peer{Name: name, Addr: addr})
	}
	return ps
}

// Cmd is a command run on a peer guest through its agent, shaped like
// os/exec.Cmd. Set Stdout, Stderr, Env (added to the agent's environment) and
// Dir before Start.
type Cmd struct {
	Path   string
	Args   []string // Args[0] is Path
	Env    []string
	Dir    string
	Stdout io.Writer
	Stderr io.Writer

	ctx  context.Context
	peer Peer
	impl cmdImpl // the bed's transport (internal/vm's agent client)

	waitOnce sync.Once
	waitErr  error
	code     int
}

// cmdImpl is what a started command needs from the transport.
type cmdImpl interface {
	Wait() (exitCode int, err error)
	Signal(sig int) error
}

// Command prepares name with args on the peer. The command is killed when ctx
// is done.
func (p Peer) Command(ctx context.Context, name string, arg ...string) *Cmd {
	return &Cmd{Path: name, Args: append([]string{name}, arg...), ctx: ctx, peer: p}
}

// RequireGuest skips a test that must run inside the bed when it runs
// elsewhere, or fails it where RDMABENCH_REQUIRE_RDMA=1 (the bed's runs, and
// the host runs of `vmexec --where auto`): a test that belongs in a guest
// cannot pass by skipping there.
func RequireGuest(tb testing.TB, why string) {
	tb.Helper()
	if InGuest() {
		return
	}
	if os.Getenv("RDMABENCH_REQUIRE_RDMA") == "1" {
		tb.Fatalf("RDMABENCH_REQUIRE_RDMA=1 but not in a guest of the bed: %s (declare the package's layout with vmtest.Layout)", why)
	}
	tb.Skipf("not in a guest of the bed: %s", why)
}
