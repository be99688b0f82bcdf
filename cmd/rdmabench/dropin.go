package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/auth"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/version"
)

// The perftest drop-in (docs/perftest.md): invoked through a link named
// after a perftest tool (ib_send_lat, ib_write_bw, ...), rdmabench takes
// that tool's arguments and prints its header and table. Without a host it
// is perftest's server: rdmabench's server for exactly one session, which
// then prints the client's figures (its bye carries them) and exits. With
// a host it is the client: `run` with the mapped tests.

// dropIn runs the drop-in when argv[0]'s base name is a perftest tool;
// ok is false otherwise (rdmabench's own command line).
func dropIn(argv []string) (code int, ok bool) {
	if len(argv) == 0 {
		return 0, false
	}
	tool, ok := perftest.ToolOf(argv[0])
	if !ok {
		return 0, false
	}
	return runDropIn(tool, argv[1:], os.Stdout, os.Stderr), true
}

// runDropIn parses tool's arguments and runs its server or client.
func runDropIn(tool perftest.Tool, args []string, stdout, stderr io.Writer) int {
	o, err := perftest.Parse(tool, args)
	if err != nil {
		fmt.Fprintf(stderr, "%s (rdmabench drop-in): %v\n", tool.Name, err)
		return exitUsage
	}
	switch {
	case o.Help:
		writeDropInUsage(stdout, tool)
		return exitOK
	case o.Version:
		fmt.Fprintf(stdout, "Version: rdmabench %s (perftest drop-in for %s)\n", version.String(), tool.Name)
		return exitOK
	}
	ctx, stop := signalContext()
	defer stop()
	if o.IsServer() {
		err = dropInServer(ctx, o, stdout, stderr)
	} else {
		err = dropInClient(ctx, o, stdout, stderr)
	}
	err = endedEarly(ctx, err)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "%s (rdmabench drop-in): %v\n", tool.Name, err)
	return exitCode(err)
}

// dropInSpecs maps the options to rdmabench's tests, one per size
// (perftest.Specs); a plan rdmabench refuses is a usage error.
func dropInSpecs(o perftest.Options) ([]spec.Spec, error) {
	specs, err := perftest.Specs(o)
	if err != nil {
		return nil, usageError{err}
	}
	return specs, nil
}

// dropInClient runs the tests against the drop-in server on o.Host and
// prints perftest's header and table.
func dropInClient(ctx context.Context, o perftest.Options, stdout, stderr io.Writer) error {
	specs, err := dropInSpecs(o)
	if err != nil {
		return err
	}
	if tried, err := dropInPerftestClient(ctx, o, stdout); tried { // a perftest server (dropin_perftest.go)
		return err
	}
	if err := bench.CheckBudget(specs, bench.Budget{}, false); err != nil {
		return err
	}
	key, err := loadKey("", stderr)
	if err != nil {
		return err
	}
	cfg := bench.RunConfig{
		Client: bench.ClientConfig{Device: o.Device, Port: o.IBPort, GIDIndex: o.GIDIndex, RDMACM: o.RDMACM, AuthKey: key,
			Run: bench.RunOptions{CPU: -1, Out: io.Discard, Unit: result.UnitMiB}},
		Specs: specs, ConnTimeout: 30 * time.Second, CommandLine: os.Args,
		ByeReport: func(doc *result.Document, err error) []byte {
			b, _ := perftest.NewReport(doc, err, true, proto.MaxPayload-4096) // histograms for the server's -H, while they fit
			return b
		},
	}
	doc, err := bench.RunClient(ctx, net.JoinHostPort(o.Host, strconv.Itoa(o.Port)), cfg)
	var pe *proto.PerftestPeerError
	if errors.As(err, &pe) { // a perftest server, and a test the drop-in does not run against perftest
		_, _, why := perftestSpec(o)
		return fmt.Errorf("the server is perftest %s, and the drop-in does not run this test against perftest: %v (docs/perftest.md)", pe.Version, why)
	}
	if doc != nil {
		if werr := printDropIn(stdout, o, perftest.Client, doc.Env, doc.Results); werr != nil && err == nil {
			err = werr
		}
		for _, w := range doc.Warnings {
			fmt.Fprintf(stderr, "rdmabench: warning: %s\n", w)
		}
	}
	if path := os.Getenv("RDMABENCH_DROPIN_JSON"); path != "" && doc != nil {
		if werr := result.WriteJSONFile(path, doc); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	return perftest.CheckLimits(o, doc.Results)
}

// printDropIn prints one side's header and table; perftest's READ and
// atomic latency servers print the header only.
func printDropIn(w io.Writer, o perftest.Options, side perftest.Side, env result.Env, rs []result.Result) error {
	if len(rs) == 0 {
		return nil
	}
	perftest.WriteHeader(w, o, side, env, rs[0])
	if side == perftest.Server && o.Tool.Lat && (o.Tool.Verb == perftest.Read || o.Tool.Verb == perftest.Atomic) {
		if o.Output == "" {
			fmt.Fprint(w, strings.Repeat("-", 87)+"\n")
		}
		return nil
	}
	return perftest.WriteTable(w, o, side, rs)
}

// dropInServer serves exactly one client session on o.Port, as perftest's
// server does, then prints the table of the figures the client sent.
func dropInServer(ctx context.Context, o perftest.Options, stdout, stderr io.Writer) error {
	key, err := loadKey("", stderr)
	if err != nil {
		return err
	}
	if o.RDMACM && key != nil { // perftest's exchange has no authentication: refuse before listening
		return usageError{fmt.Errorf("-R with $%s set: the drop-in's -R server speaks only perftest's exchange over rdma_cm, which cannot prove a key; leave out -R (rdmabench's protocol proves it) or unset the key to serve perftest clients", auth.KeyEnv)}
	}
	if o.Output == "" {
		fmt.Fprint(stdout, perftest.WaitingBanner)
	}
	if o.RDMACM { // as perftest's -R server: the exchange over rdma_cm, no TCP (dropin_perftest.go)
		return dropInPerftestCMServer(ctx, o, stdout)
	}
	var (
		mu  sync.Mutex
		rep *perftest.Report
		bad error
	)
	lg := log.New(io.Discard, "", 0)
	if os.Getenv("RDMABENCH_DROPIN_LOG") != "" {
		lg = log.New(stderr, "rdmabench server: ", log.LstdFlags)
	}
	srv, err := bench.NewServer(bench.ServerConfig{Device: o.Device, Port: o.IBPort, GIDIndex: o.GIDIndex, Log: lg, AuthKey: key,
		Exposed: true, // perftest's server takes any client; this one takes one session, then exits
		OnBye: func(peer string, b []byte) {
			r, err := perftest.DecodeReport(b)
			mu.Lock()
			defer mu.Unlock()
			rep, bad = &r, err
		}})
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(o.Port)))
	if err != nil {
		return fmt.Errorf("-p %d: %w", o.Port, err) // as rdmabench server: a listen error is exit 4
	}
	first, isPerftest, err := acceptFirst(ctx, ln)
	ln.Close() // like perftest's server: nobody else connects
	if err != nil {
		return err
	}
	if isPerftest { // a perftest client (dropin_perftest.go)
		defer first.Close()
		if key != nil { // it cannot prove the key: nothing is allocated for it
			return &auth.Error{Msg: fmt.Sprintf("the client at %s is perftest, which has no authentication, and $%s is set: refused before anything was allocated for it (unset the key to serve perftest clients)", first.RemoteAddr(), auth.KeyEnv)}
		}
		return dropInPerftestServer(ctx, o, first, stdout)
	}
	if err := srv.Serve(ctx, bench.NewOneSession(bench.NewOneConn(first, ln.Addr()))); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case bad != nil:
		return &proto.Error{Op: "client report", Err: bad}
	case rep == nil:
		return errors.New("the session ended without the client's results (it failed, or is not an rdmabench drop-in client)")
	}
	env := rep.Env
	if rep.ServerEnv != nil {
		env = *rep.ServerEnv
	}
	if err := printDropIn(stdout, o, perftest.Server, env, rep.Results); err != nil {
		return err
	}
	if rep.Error != "" {
		return &proto.RemoteError{Msg: "the client's run failed: " + rep.Error}
	}
	return nil
}

// writeDropInUsage prints the drop-in's usage: perftest's synopsis and the
// options it takes.
func writeDropInUsage(w io.Writer, tool perftest.Tool) {
	fmt.Fprintf(w, "Usage (rdmabench %s, perftest drop-in; docs/perftest.md):\n", version.String())
	fmt.Fprintf(w, "  %-20s start a server and wait for one client (perftest's %s, or rdmabench's drop-in)\n", tool.Name, tool.Name)
	fmt.Fprintf(w, "  %-20s connect to server at <host> (perftest's server, or rdmabench's)\n\nOptions taken:\n", tool.Name+" <host>")
	var refused []string
	for _, f := range perftest.Flags() {
		name := f.Long
		if f.Short != "" {
			name = f.Short + ", " + f.Long
		}
		if !f.Supported {
			refused = append(refused, name)
			continue
		}
		only := ""
		if f.Only != "" {
			only = " (" + f.Only + ")"
		}
		fmt.Fprintf(w, "  %s%s\n", name, only)
	}
	fmt.Fprintf(w, "\nRefused with exit 2 and the reason (see docs/perftest.md):\n  %s\n", strings.Join(refused, " "))
}
