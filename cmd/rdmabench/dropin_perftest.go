package main

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

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/cmchan"
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
// rdmabench's header.

// perftestTest is what this side negotiates with perftest >= 6.28 (the
// size, iterations, QPs and the device's max_qp_rd_atom are filled in by
// bench.RunDropIn).
func perftestTest(o perftest.Options) wire.Test {
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

// perftestSpec is the test the drop-in runs against perftest, or why it
// cannot; with -a also its sizes in order (perftest's RUN_ALL: every size
// on the same QPs, bench.DropInConfig.Sizes), else nil.
func perftestSpec(o perftest.Options) (spec.Spec, []int, error) {
	specs, err := dropInSpecs(o)
	if err != nil {
		return spec.Spec{}, nil, err
	}
	var sizes []int
	switch {
	case o.AllSizes && o.Duration > 0:
		return spec.Spec{}, nil, fmt.Errorf("%w: -a with -D (perftest runs -D on one size)", bench.ErrPerftestUnsupported)
	case o.AllSizes && o.Bidir:
		return spec.Spec{}, nil, fmt.Errorf("%w: -a with -b (-b on one size)", bench.ErrPerftestUnsupported)
	case o.AllSizes && o.ConnOrDefault() != "RC":
		return spec.Spec{}, nil, fmt.Errorf("%w: -a with -c %s (-a on RC)", bench.ErrPerftestUnsupported, o.ConnOrDefault())
	}
	if o.AllSizes {
		for _, sp := range specs {
			sizes = append(sizes, sp.Size)
		}
	} else if len(specs) != 1 {
		return spec.Spec{}, nil, fmt.Errorf("%w: %d tests in one run", bench.ErrPerftestUnsupported, len(specs))
	}
	return specs[0], sizes, bench.DropInSupported(specs[0])
}

// dropInPerftestClient runs the test against a perftest server at addr;
// tried is false when the server is not perftest (rdmabench's protocol
// then), or the test is not one the drop-in runs against perftest.
func dropInPerftestClient(ctx context.Context, o perftest.Options, stdout io.Writer) (tried bool, err error) {
	s, sizes, serr := perftestSpec(o)
	if serr != nil && !o.RDMACM {
		return false, nil // rdmabench's protocol, which names the reason to a perftest server
	}
	var nc net.Conn
	if o.RDMACM { // perftest's -R exchange runs over rdma_cm (no TCP)
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", o.Host)
		if err != nil || len(ips) == 0 {
			return true, fmt.Errorf("-R: server %q: no IPv4 address (%v)", o.Host, err)
		}
		cc, err := bench.DialPerftestCM(ctx, netip.AddrPortFrom(ips[0], uint16(o.Port)), o.Device, o.GIDIndex, 30*time.Second)
		if errors.Is(err, bench.ErrNotPerftest) {
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
	rec, saveRec, err := dropInRecord(o)
	if err != nil {
		return true, err
	}
	run, err := bench.RunDropIn(ctx, nc, bench.DropInConfig{Device: o.Device, Port: o.IBPort, GIDIndex: o.GIDIndex, Client: true,
		Spec: s, Sizes: sizes, Peak: !o.NoPeak, Test: perftestTest(o), Run: bench.RunOptions{CPU: -1, Out: io.Discard, Unit: result.UnitMiB}, Trace: dropInTrace(), Record: rec})
	saveRec()
	if errors.Is(err, bench.ErrNotPerftest) {
		return false, nil
	}
	return true, finishPerftest(stdout, o, perftest.Client, run, nc.RemoteAddr().String(), err)
}

// finishPerftest prints this side's table and names the peer in errors.
// With RDMABENCH_DROPIN_JSON=FILE a side that timed the loop also writes
// rdmabench's result document there.
func finishPerftest(stdout io.Writer, o perftest.Options, side perftest.Side, run *bench.DropInRun, peerAddr string, err error) error {
	if err != nil {
		if run != nil && run.Peer.Raw != "" {
			return fmt.Errorf("against perftest %s: %w", run.Peer, err)
		}
		return err
	}
	if perr := printDropIn(stdout, o, side, run.Env, perftestShown(run.Results)); perr != nil {
		return perr
	}
	if path := os.Getenv("RDMABENCH_DROPIN_JSON"); path != "" && run.Timed {
		role := "client"
		if side == perftest.Server {
			role = "dropin-server"
		}
		doc := &result.Document{SchemaVersion: result.SchemaVersion, Tool: "rdmabench", ToolVersion: version.String(), CommandLine: os.Args,
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

// perftestShown are the results as the table shows them facing perftest:
// BW peak is perftest's where computed, else 0.00 as perftest prints it
// (never rdmabench's best interval).
func perftestShown(rs []result.Result) []result.Result {
	out := slices.Clone(rs)
	for i := range out {
		if out[i].PerftestPeak == nil {
			out[i].PerftestPeak = &result.Bandwidth{}
		}
	}
	return out
}

// dropInTrace is stderr with RDMABENCH_DROPIN_LOG set, else nil.
func dropInTrace() io.Writer {
	if os.Getenv("RDMABENCH_DROPIN_LOG") != "" {
		return os.Stderr
	}
	return nil
}

// dropInRecord is, with RDMABENCH_DROPIN_RECORD=FILE, a recording of the
// exchange and the function that writes it to FILE (a failure to write is
// printed to stderr); else nil and a no-op. FILE is created here, so that a
// path it cannot write is refused before the exchange.
func dropInRecord(o perftest.Options) (*wire.Recording, func(), error) {
	path := os.Getenv("RDMABENCH_DROPIN_RECORD")
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("RDMABENCH_DROPIN_RECORD: %w", err)
	}
	f.Close()
	rec := &wire.Recording{Tool: o.Tool.Name, Args: os.Args[1:]}
	return rec, func() {
		if err := rec.WriteFile(path); err != nil {
			fmt.Fprintf(os.Stderr, "RDMABENCH_DROPIN_RECORD: %v\n", err)
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
// client from rdmabench's by its first 4 bytes (bench.AcceptPeek).
func acceptFirst(ctx context.Context, ln net.Listener) (net.Conn, bool, error) {
	c, first, err := bench.AcceptPeek(ctx, ln, 4, 30*time.Second)
	if err != nil {
		return nil, false, err
	}
	return c, perftestFirst(first), nil
}

// dropInPerftestServer serves the one perftest client on c.
func dropInPerftestServer(ctx context.Context, o perftest.Options, c net.Conn, stdout io.Writer) error {
	s, sizes, err := perftestSpec(o)
	if err != nil { // its version first, to name it
		who := "perftest"
		wc := &wire.Conn{C: c, Timeout: 5 * time.Second}
		if v, verr := wc.Versions(wire.OurVersion); verr == nil {
			who += " " + v.String()
		}
		return fmt.Errorf("the client is %s, and %w", who, err)
	}
	rec, saveRec, err := dropInRecord(o)
	if err != nil {
		return err
	}
	run, err := bench.RunDropIn(ctx, c, bench.DropInConfig{Device: o.Device, Port: o.IBPort, GIDIndex: o.GIDIndex,
		Spec: s, Sizes: sizes, Peak: !o.NoPeak, Test: perftestTest(o), Run: bench.RunOptions{CPU: -1, Out: io.Discard, Unit: result.UnitMiB}, Trace: dropInTrace(), Record: rec})
	saveRec()
	return finishPerftest(stdout, o, perftest.Server, run, c.RemoteAddr().String(), err)
}

// dropInPerftestCMServer is the drop-in's server with -R: like perftest's,
// it listens with rdma_cm on -p (no TCP) and serves its first client over
// perftest's exchange.
func dropInPerftestCMServer(ctx context.Context, o perftest.Options, stdout io.Writer) error {
	l, err := cmchan.Listen(o.Port)
	if err != nil {
		return fmt.Errorf("-p %d: -R: %w", o.Port, err)
	}
	defer l.Close()
	c, err := bench.AcceptPerftestCM(ctx, l, o.Device, o.GIDIndex, 30*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	return dropInPerftestServer(ctx, o, c, stdout)
}
