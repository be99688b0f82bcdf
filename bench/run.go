package bench

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/auth"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/server"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/clock"
	"github.com/rdmabench/rdmabench/internal/version"

	"golang.org/x/sys/unix"
)

// RunConfig is a whole client run: where, which tests, how to report.
type RunConfig struct {
	Client      ClientConfig
	Specs       []spec.Spec
	ConnTimeout time.Duration // connecting to the server
	Progress    io.Writer     // one line per test as it starts (nil: none)
	CommandLine []string
	ServerCPUs  []int // loopback: pin the in-process server's responder thread to ServerCPUs[0]; nil: no pinning
	// ByeReport, when set, makes the report RunClient hands the server in
	// its bye (server.Config.OnBye) from the finished document and the run's
	// error; nil from it: an empty bye.
	ByeReport func(doc *result.Document, err error) []byte
}

// RunClient runs every spec against the server at addr and returns the
// whole document. On an error the document holds the results so far and
// the error is returned too.
func RunClient(ctx context.Context, addr string, cfg RunConfig) (*result.Document, error) {
	doc := &result.Document{SchemaVersion: result.SchemaVersion, Tool: "rdmabench", ToolVersion: version.String(),
		CommandLine: cfg.CommandLine, Start: time.Now(), Role: "client", Peer: addr}
	cl, err := Dial(ctx, addr, cfg.Client, cfg.ConnTimeout)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	err = runAll(ctx, cl, doc, cfg)
	if cfg.ByeReport != nil {
		cl.SetByeReport(cfg.ByeReport(doc, err))
	}
	return doc, err
}

// runAll runs the specs in order; the first failure ends the run, and the
// document is then marked partial.
func runAll(ctx context.Context, cl *Client, doc *result.Document, cfg RunConfig) (err error) {
	defer func() {
		if err != nil {
			doc.Partial = true
		}
	}()
	env, warns, err := device.SideEnv(cl.Device(), cl.c.LocalAddr(), cfg.Client.Run.CPU)
	if err != nil {
		return err
	}
	if cl.Device() != nil {
		env.QPType = envQPType(cfg.Specs)
	}
	doc.ServerEnv = cl.serverEnv
	if env.SoftwareRDMA {
		// one device when both ends use the same GID (host names may be unset)
		same := doc.ServerEnv != nil && doc.ServerEnv.Device == env.Device && doc.ServerEnv.GID == env.GID
		env.SoftwareRDMANote = result.SoftwareRDMANote(env.Device, env.Driver, env.Netdev, same)
		warns = append(warns, env.SoftwareRDMANote)
	}
	doc.Warnings = append(doc.Warnings, warns...)
	defer func() {
		env.PathMTU, env.InlineSizeGranted = cl.last.pathMTU, cl.last.inline
		if c := cl.last.conn; c != nil && c.Method == result.ConnRDMACM && c.GID != "" {
			env.GIDIndex, env.GIDType, env.GID, env.GIDReason = c.GIDIndex, c.GIDType, c.GID, c.GIDReason
		}
		clock.FillDrift(&env)
		doc.Env = env
		doc.End = time.Now()
		var ru unix.Rusage
		if unix.Getrusage(unix.RUSAGE_SELF, &ru) == nil {
			doc.PeakRSSBytes = ru.Maxrss * 1024
		}
	}()
	if err := endpoint.CheckSpecs(cl.Device(), cfg.Specs); err != nil { // the device's limits, before any test
		return err
	}
	for i, s := range cfg.Specs {
		if err := ctx.Err(); err != nil {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("interrupted after %d of %d tests: %v", i, len(cfg.Specs), context.Cause(ctx)))
			return context.Cause(ctx)
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "rdmabench: [%d/%d] %s\n", i+1, len(cfg.Specs), s.Name())
		}
		if len(s.LoadSweep) > 0 {
			rs, sw, err := runLoadSweep(ctx, cl, s, cfg.Client.Run)
			doc.Results = append(doc.Results, rs...)
			if err != nil {
				doc.Warnings = append(doc.Warnings, fmt.Sprintf("%s failed: %v", s.Name(), err))
				return fmt.Errorf("%s: %w", s.Name(), err)
			}
			doc.LoadSweeps = append(doc.LoadSweeps, *sw)
			continue
		}
		r, err := runRepeated(ctx, cl, s, cfg.Client.Run)
		if err != nil {
			if ctx.Err() != nil {
				doc.Warnings = append(doc.Warnings, fmt.Sprintf("interrupted during %s (test %d of %d): %v", s.Name(), i+1, len(cfg.Specs), context.Cause(ctx)))
				return context.Cause(ctx)
			}
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("%s failed: %v", s.Name(), err))
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
		doc.Results = append(doc.Results, r)
		if w := hostenv.ClockShareWarning(s.Name(), env.ClockReadCostNS, r); w != "" {
			doc.Warnings = append(doc.Warnings, w)
		}
	}
	return nil
}

// RunLoopback runs both ends in this process on one device: a server on
// 127.0.0.1 (an ephemeral port) and a client, over the same control
// protocol and code as a two-host run.
//
// The two ends share a random key of their own (or cfg.Client.AuthKey): the
// in-process server answers no other client, even on 127.0.0.1.
func RunLoopback(ctx context.Context, cfg RunConfig, serverLog *log.Logger) (*result.Document, error) {
	if len(cfg.Client.AuthKey) == 0 {
		cfg.Client.AuthKey = auth.RandomKey(32)
	}
	if cfg.Client.GIDIndex >= 0 && cfg.Client.Transport != result.TransportTCP && !cfg.Client.RDMACM {
		// the user's -x: refuse it here, as this side's error, before the
		// in-process server meets it in the handshake
		lo := netip.MustParseAddr("127.0.0.1")
		name, port, _, err := device.Choose(cfg.Client.Device, cfg.Client.Port, lo)
		if err != nil {
			return nil, err
		}
		dev, err := device.Open(name, port, cfg.Client.GIDIndex, lo)
		if err != nil {
			return nil, err
		}
		dev.Close()
	}
	srv, err := server.New(server.Config{Device: cfg.Client.Device, Port: cfg.Client.Port, GIDIndex: cfg.Client.GIDIndex,
		Log: serverLog, CPUs: cfg.ServerCPUs, AuthKey: cfg.Client.AuthKey, NUMA: cfg.Client.NUMA})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	defer func() {
		cancel()
		<-served
	}()
	doc, err := RunClient(ctx, ln.Addr().String(), cfg)
	if doc != nil {
		doc.Role, doc.Peer = "loopback", ""
	}
	return doc, err
}

// envQPType is Env.QPType of a run: the QP type of its RDMA tests, or
// several joined with "," when they differ ("RC" when there are none).
func envQPType(specs []spec.Spec) string {
	var types []string
	for _, s := range specs {
		if l := s.QPTypeLabel(); l != "" && !slices.Contains(types, l) {
			types = append(types, l)
		}
	}
	if len(types) == 0 {
		return "RC"
	}
	return strings.Join(types, ",")
}
