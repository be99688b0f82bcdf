package dropin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/rdmabench/rdmabench/bench/cmchan"
	"github.com/rdmabench/rdmabench/bench/dropin/peer"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/version"
)

// The drop-in facing a real perftest tool (docs/perftest.md, "Facing
// perftest"): the client tries perftest's exchange first and falls back
// to rdmabench's protocol when the server is rdmabench; the server looks
// at the first bytes of its one connection: perftest's version string, or
// rdmabench's header. peer.Run runs the test itself.

// wireTest is what this side negotiates with perftest >= 6.28 (the
// size, iterations, QPs and the device's max_qp_rd_atom are filled in by
// peer.Run).
func wireTest(o perftest.Options) wire.Test {
	t := wire.Test{Lat: o.Tool.Lat, Conn: wire.ConnRC, AllSizes: o.AllSizes, Duration: o.Duration, ReportGbits: o.ReportGbits,
		RDMACM: o.RDMACM, CmpAndSwap: o.AtomicType == "CMP_AND_SWAP"}
	switch o.Tool.Verb {
	case perftest.Send:
		t.Verb = wire.VerbSend
	case perftest.Write:
		t.Verb = wire.VerbWrite
	case perftest.Read:
		t.Verb = wire.VerbRead
	case perftest.Atomic:
		t.Verb = wire.VerbAtomic
	}
	switch o.ConnOrDefault() { // -c
	case "UC":
		t.Conn = wire.ConnUC
	case "UD":
		t.Conn = wire.ConnUD
	}
	return t
}

// facingSpec is the test the drop-in runs against perftest, or why it
// cannot; with -a also its sizes in order (perftest's RUN_ALL: every size
// on the same QPs, peer.Config.Sizes), else nil.
func facingSpec(o perftest.Options) (spec.Spec, []int, error) {
	specs, err := specs(o)
	if err != nil {
		return spec.Spec{}, nil, err
	}
	var sizes []int
	switch {
	case o.AllSizes && o.Duration > 0:
		return spec.Spec{}, nil, fmt.Errorf("%w: -a with -D (perftest runs -D on one size)", peer.ErrPerftestUnsupported)
	case o.AllSizes && o.Bidir:
		return spec.Spec{}, nil, fmt.Errorf("%w: -a with -b (-b on one size)", peer.ErrPerftestUnsupported)
	case o.AllSizes && o.ConnOrDefault() != "RC":
		return spec.Spec{}, nil, fmt.Errorf("%w: -a with -c %s (-a on RC)", peer.ErrPerftestUnsupported, o.ConnOrDefault())
	}
	if o.AllSizes {
		for _, sp := range specs {
			sizes = append(sizes, sp.Size)
		}
	} else if len(specs) != 1 {
		return spec.Spec{}, nil, fmt.Errorf("%w: %d tests in one run", peer.ErrPerftestUnsupported, len(specs))
	}
	return specs[0], sizes, peer.Supports(specs[0])
}

// clientFacingPerftest runs the test against a perftest server at o.Host;
// tried is false when the server is not perftest (rdmabench's protocol
// then), or the test is not one the drop-in runs against perftest.
func clientFacingPerftest(ctx context.Context, cfg Config) (tried bool, err error) {
	o := cfg.Options
	s, sizes, serr := facingSpec(o)
	if serr != nil && !o.RDMACM {
		return false, nil // rdmabench's protocol, which names the reason to a perftest server
	}
	var nc net.Conn
	if o.RDMACM { // perftest's -R exchange runs over rdma_cm (no TCP)
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", o.Host)
		if err != nil || len(ips) == 0 {
			return true, fmt.Errorf("-R: server %q: no IPv4 address (%v)", o.Host, err)
		}
		cc, err := peer.DialPerftestCM(ctx, netip.AddrPortFrom(ips[0], uint16(o.Port)), o.Device, o.GIDIndex, 30*time.Second)
		if errors.Is(err, peer.ErrNotPerftest) {
			return false, nil // no rdma_cm listener: an rdmabench server (TCP)
		}
		if err != nil {
			return true, err
		}
		nc = cc
		if serr != nil { // a -R server has no TCP port for rdmabench's protocol: name the reason here
			who := "perftest"
			wc := &wire.Conn{C: cc, Client: true, Binary: true, Timeout: 5 * time.Second}
			if v, err := wc.Versions(wire.OurVersion); err == nil {
				who += " " + v.String()
			}
			cc.Close()
			return true, fmt.Errorf("the server is %s, and the drop-in does not run this test against perftest: %v (docs/perftest.md)", who, serr)
		}
	} else {
		d := net.Dialer{Timeout: 30 * time.Second}
		if nc, err = d.DialContext(ctx, "tcp", net.JoinHostPort(o.Host, strconv.Itoa(o.Port))); err != nil {
			return true, err
		}
	}
	defer nc.Close()
	rec, saveRec, err := record(cfg)
	if err != nil {
		return true, err
	}
	run, err := peer.Run(ctx, nc, peer.Config{Device: o.Device, Port: o.IBPort, GIDIndex: o.GIDIndex, Client: true,
		Spec: s, Sizes: sizes, Peak: !o.NoPeak, Test: wireTest(o), Run: measure.Options{CPU: -1, Out: io.Discard, Unit: result.UnitMiB}, Trace: trace(cfg), Record: rec})
	saveRec()
	if errors.Is(err, peer.ErrNotPerftest) {
		return false, nil
	}
	return true, finishFacingPerftest(cfg, perftest.Client, run, nc.RemoteAddr().String(), err)
}

// finishFacingPerftest prints this side's table and names the peer in
// errors. With RDMABENCH_DROPIN_JSON=FILE a side that timed the loop also
// writes rdmabench's result document there.
func finishFacingPerftest(cfg Config, side perftest.Side, run *peer.Outcome, peerAddr string, err error) error {
	o := cfg.Options
	if err != nil {
		if run != nil && run.Peer.Raw != "" {
			return fmt.Errorf("against perftest %s: %w", run.Peer, err)
		}
		return err
	}
	if perr := printTable(cfg.Stdout, o, side, run.Env, shownFacingPerftest(run.Results)); perr != nil {
		return perr
	}
	if path := os.Getenv("RDMABENCH_DROPIN_JSON"); path != "" && run.Timed {
		role := "client"
		if side == perftest.Server {
			role = "dropin-server"
		}
		doc := &result.Document{SchemaVersion: result.SchemaVersion, Tool: "rdmabench", ToolVersion: version.String(), CommandLine: cfg.CommandLine,
			Start: run.Start, End: run.End, Role: role, Peer: "perftest " + run.Peer.Raw + " at " + peerAddr, Env: run.Env,
			Results: run.Results}
		if err := result.WriteJSONFile(path, doc); err != nil {
			return err
		}
	}
	if side == perftest.Client || run.Timed {
		return perftest.CheckLimits(o, run.Results)
	}
	return nil
}

// shownFacingPerftest are the results as the table shows them facing
// perftest: BW peak is perftest's where computed, else 0.00 as perftest
// prints it (never rdmabench's best interval).
func shownFacingPerftest(rs []result.Result) []result.Result {
	out := slices.Clone(rs)
	for i := range out {
		if out[i].PerftestPeak == nil {
			out[i].PerftestPeak = &result.Bandwidth{}
		}
	}
	return out
}

// trace is cfg.Stderr with RDMABENCH_DROPIN_LOG set, else nil.
func trace(cfg Config) io.Writer {
	if os.Getenv("RDMABENCH_DROPIN_LOG") != "" {
		return cfg.Stderr
	}
	return nil
}

// record is, with RDMABENCH_DROPIN_RECORD=FILE, a recording of the
// exchange and the function that writes it to FILE (a failure to write is
// printed to cfg.Stderr); else nil and a no-op. FILE is created here, so
// that a path it cannot write is refused before the exchange.
func record(cfg Config) (*wire.Recording, func(), error) {
	path := os.Getenv("RDMABENCH_DROPIN_RECORD")
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("RDMABENCH_DROPIN_RECORD: %w", err)
	}
	f.Close()
	rec := &wire.Recording{Tool: cfg.Options.Tool.Name}
	if len(cfg.CommandLine) > 0 {
		rec.Args = cfg.CommandLine[1:]
	}
	return rec, func() {
		if err := rec.WriteFile(path); err != nil {
			fmt.Fprintf(cfg.Stderr, "RDMABENCH_DROPIN_RECORD: %v\n", err)
		}
	}, nil
}

// perftestFirst reports whether the first bytes of a connection are
// perftest's version string (digits, then a dot) rather than rdmabench's
// header ("RDMB").
func perftestFirst(b []byte) bool {
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i > 0 && i < len(b) && b[i] == '.'
}

// acceptFirst accepts the server's one connection and tells perftest's
// client from rdmabench's by its first 4 bytes (acceptPeek).
func acceptFirst(ctx context.Context, ln net.Listener) (net.Conn, bool, error) {
	c, first, err := acceptPeek(ctx, ln, 4, 30*time.Second)
	if err != nil {
		return nil, false, err
	}
	return c, perftestFirst(first), nil
}

// serverFacingPerftest serves the one perftest client on c.
func serverFacingPerftest(ctx context.Context, cfg Config, c net.Conn) error {
	o := cfg.Options
	s, sizes, err := facingSpec(o)
	if err != nil { // its version first, to name it
		who := "perftest"
		wc := &wire.Conn{C: c, Timeout: 5 * time.Second}
		if v, verr := wc.Versions(wire.OurVersion); verr == nil {
			who += " " + v.String()
		}
		return fmt.Errorf("the client is %s, and %w", who, err)
	}
	rec, saveRec, err := record(cfg)
	if err != nil {
		return err
	}
	run, err := peer.Run(ctx, c, peer.Config{Device: o.Device, Port: o.IBPort, GIDIndex: o.GIDIndex,
		Spec: s, Sizes: sizes, Peak: !o.NoPeak, Test: wireTest(o), Run: measure.Options{CPU: -1, Out: io.Discard, Unit: result.UnitMiB}, Trace: trace(cfg), Record: rec})
	saveRec()
	return finishFacingPerftest(cfg, perftest.Server, run, c.RemoteAddr().String(), err)
}

// serverFacingPerftestCM is the drop-in's server with -R: like perftest's,
// it listens with rdma_cm on -p (no TCP) and serves its first client over
// perftest's exchange.
func serverFacingPerftestCM(ctx context.Context, cfg Config) error {
	o := cfg.Options
	l, err := cmchan.Listen(o.Port)
	if err != nil {
		return fmt.Errorf("-p %d: -R: %w", o.Port, err)
	}
	defer l.Close()
	c, err := peer.AcceptPerftestCM(ctx, l, o.Device, o.GIDIndex, 30*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	return serverFacingPerftest(ctx, cfg, c)
}
