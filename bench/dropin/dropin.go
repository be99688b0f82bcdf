// Package dropin is the perftest drop-in (docs/perftest.md): invoked
// through a link named after a perftest tool (ib_send_lat, ib_write_bw,
// ...), rdmabench takes that tool's arguments and prints its header and
// table. Without a host it is perftest's server: rdmabench's server for
// exactly one session, which then prints the client's figures (its bye
// carries them) and exits. With a host it is the client: `run` with the
// mapped tests. Facing a real perftest tool (facing.go) it speaks
// perftest's exchange instead, and peer.Run runs the test.
//
// The CLI (cmd/rdmabench/dropin.go) turns argv into a Config and calls
// Run; perftest's options, tools and tables are bench/perftest, its
// exchange bench/perftest/wire.
package dropin

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
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	benchserver "github.com/rdmabench/rdmabench/bench/server"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/version"
)

// Config is one run of the drop-in.
type Config struct {
	Options        perftest.Options // the tool's command line, parsed (perftest.Parse)
	Stdout, Stderr io.Writer
	// CommandLine is the process's argv: the result document's command
	// line, and (after argv[0]) a recording's arguments.
	CommandLine []string
}

// UsageError is an error of the command line (exit 2 in the CLI): a plan
// rdmabench refuses, -R with a key, a key that cannot be used.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Run runs the tool's server (no host in the options) or its client.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Options.IsServer() {
		return server(ctx, cfg)
	}
	return client(ctx, cfg)
}

// specs maps the options to rdmabench's tests, one per size
// (perftest.Specs); a plan rdmabench refuses is a usage error.
func specs(o perftest.Options) ([]spec.Spec, error) {
	specs, err := perftest.Specs(o)
	if err != nil {
		return nil, UsageError{err}
	}
	return specs, nil
}

// loadKey is the key in $RDMABENCH_AUTH_KEY (nil without one), its
// warning printed to stderr; a key that cannot be used is a usage error.
func loadKey(stderr io.Writer) ([]byte, error) {
	key, warn, err := auth.LoadKey("")
	if err != nil {
		return nil, UsageError{err}
	}
	if warn != "" {
		fmt.Fprintf(stderr, "rdmabench: warning: %s\n", warn)
	}
	return key, nil
}

// client runs the tests against the drop-in server on o.Host and prints
// perftest's header and table; a perftest server there is tried first
// (facing.go).
func client(ctx context.Context, cfg Config) error {
	o, stdout, stderr := cfg.Options, cfg.Stdout, cfg.Stderr
	specs, err := specs(o)
	if err != nil {
		return err
	}
	if tried, err := clientFacingPerftest(ctx, cfg); tried {
		return err
	}
	if err := endpoint.CheckBudget(specs, endpoint.Budget{}, false); err != nil {
		return err
	}
	key, err := loadKey(stderr)
	if err != nil {
		return err
	}
	rc := bench.RunConfig{
		Client: bench.ClientConfig{Device: o.Device, Port: o.IBPort, GIDIndex: o.GIDIndex, RDMACM: o.RDMACM, AuthKey: key,
			Run: measure.Options{CPU: -1, Out: io.Discard, Unit: result.UnitMiB}},
		Specs: specs, ConnTimeout: 30 * time.Second, CommandLine: cfg.CommandLine,
		ByeReport: func(doc *result.Document, err error) []byte {
			b, _ := perftest.NewReport(doc, err, true, proto.MaxPayload-4096) // histograms for the server's -H, while they fit
			return b
		},
	}
	doc, err := bench.RunClient(ctx, net.JoinHostPort(o.Host, strconv.Itoa(o.Port)), rc)
	var pe *proto.PerftestPeerError
	if errors.As(err, &pe) { // a perftest server, and a test the drop-in does not run against perftest
		_, _, why := facingSpec(o)
		return fmt.Errorf("the server is perftest %s, and the drop-in does not run this test against perftest: %v (docs/perftest.md)", pe.Version, why)
	}
	if doc != nil {
		if werr := printTable(stdout, o, perftest.Client, doc.Env, doc.Results); werr != nil && err == nil {
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

// printTable prints one side's header and table; perftest's READ and
// atomic latency servers print the header only.
func printTable(w io.Writer, o perftest.Options, side perftest.Side, env result.Env, rs []result.Result) error {
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

// server serves exactly one client on o.Port, as perftest's server does:
// a perftest client over perftest's exchange (facing.go), an rdmabench
// one in one session (serveSession).
func server(ctx context.Context, cfg Config) error {
	o, stdout := cfg.Options, cfg.Stdout
	key, err := loadKey(cfg.Stderr)
	if err != nil {
		return err
	}
	if o.RDMACM && key != nil { // perftest's exchange has no authentication: refuse before listening
		return UsageError{fmt.Errorf("-R with $%s set: the drop-in's -R server speaks only perftest's exchange over rdma_cm, which cannot prove a key; leave out -R (rdmabench's protocol proves it) or unset the key to serve perftest clients", auth.KeyEnv)}
	}
	if o.Output == "" {
		fmt.Fprint(stdout, perftest.WaitingBanner)
	}
	if o.RDMACM { // as perftest's -R server: the exchange over rdma_cm, no TCP
		return serverFacingPerftestCM(ctx, cfg)
	}
	sess, err := newSession(cfg, key)
	if err != nil {
		return err
	}
	defer sess.srv.Close()
	ln, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(o.Port)))
	if err != nil {
		return fmt.Errorf("-p %d: %w", o.Port, err) // as rdmabench server: a listen error is exit 4
	}
	first, isPerftest, err := acceptFirst(ctx, ln)
	ln.Close() // like perftest's server: nobody else connects
	if err != nil {
		return err
	}
	if isPerftest {
		defer first.Close()
		if key != nil { // it cannot prove the key: nothing is allocated for it
			return &auth.Error{Msg: fmt.Sprintf("the client at %s is perftest, which has no authentication, and $%s is set: refused before anything was allocated for it (unset the key to serve perftest clients)", first.RemoteAddr(), auth.KeyEnv)}
		}
		return serverFacingPerftest(ctx, cfg, first)
	}
	return sess.serve(ctx, cfg, first, ln.Addr())
}

// session is the server's one rdmabench session and the client's figures,
// which its bye carries.
type session struct {
	srv *benchserver.Server
	mu  sync.Mutex
	rep *perftest.Report
	bad error // the report did not decode
}

// newSession is rdmabench's server for the session, logging to stderr with
// RDMABENCH_DROPIN_LOG set.
func newSession(cfg Config, key []byte) (*session, error) {
	o := cfg.Options
	lg := log.New(io.Discard, "", 0)
	if os.Getenv("RDMABENCH_DROPIN_LOG") != "" {
		lg = log.New(cfg.Stderr, "rdmabench server: ", log.LstdFlags)
	}
	s := &session{}
	srv, err := benchserver.New(benchserver.Config{Device: o.Device, Port: o.IBPort, GIDIndex: o.GIDIndex, Log: lg, AuthKey: key,
		Exposed: true, // perftest's server takes any client; this one takes one session, then exits
		OnBye: func(peer string, b []byte) {
			r, err := perftest.DecodeReport(b)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.rep, s.bad = &r, err
		}})
	if err != nil {
		return nil, err
	}
	s.srv = srv
	return s, nil
}

// serve runs the session on first, the connection accepted on addr, then
// prints the table of the figures the client sent.
func (s *session) serve(ctx context.Context, cfg Config, first net.Conn, addr net.Addr) error {
	if err := s.srv.Serve(ctx, newOneSession(newOneConn(first, addr))); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case s.bad != nil:
		return &proto.Error{Op: "client report", Err: s.bad}
	case s.rep == nil:
		return errors.New("the session ended without the client's results (it failed, or is not an rdmabench drop-in client)")
	}
	env := s.rep.Env
	if s.rep.ServerEnv != nil {
		env = *s.rep.ServerEnv
	}
	if err := printTable(cfg.Stdout, cfg.Options, perftest.Server, env, s.rep.Results); err != nil {
		return err
	}
	if s.rep.Error != "" {
		return &proto.RemoteError{Msg: "the client's run failed: " + s.rep.Error}
	}
	return nil
}

// WriteUsage prints the drop-in's usage: perftest's synopsis and the
// options it takes.
func WriteUsage(w io.Writer, tool perftest.Tool) {
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
