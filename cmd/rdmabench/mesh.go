package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/expect"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/mesh"
	"github.com/rdmabench/rdmabench/bench/mesh/boot"
	"github.com/rdmabench/rdmabench/bench/result"
)

// meshLong is the description of 'rdmabench mesh' (its help and man page).
const meshLong = `Every rank runs a server; in each round of the pattern, the client of each
pair runs the test list (the same flags as 'run') against its peer's server.
The ranks find each other through the launcher's PMI-1 interface (PMI_FD);
after that bootstrap each rank holds a connection to rank 0 (authenticated
with a per-run key) for the barriers between rounds and its report, so a
rank that dies is marked lost at once and the others go on. Rank 0 prints
the matrix and the outliers and writes the JSON document (--json), also
after the launcher's SIGTERM or SIGINT (then partial). With --rails (or
--rail-devices) NIC i of each host is paired with NIC i of the others: the
pattern runs once per rail, rail after rail (--rails-parallel: at once), and
rank 0 prints one matrix per rail, names a NIC that is an outlier on its
rail, and writes one document per rail (--json mesh.json: mesh.rail0.json,
mesh.rail1.json, ...). See docs/mesh.md.

Exit status: 0 every pair measured; 6 partial: the document was written but
some pairs failed, a rank was lost or the run was interrupted (a rank other
than 0 exits 6 when one of its own pairs failed or its report did not reach
rank 0); 2 bad flags or not started by a launcher; 3, 4 as for run when a
rank cannot take part at all.`

// partialError is a mesh run with failed pairs (exit 6).
type partialError struct{ failed, total int }

func (e partialError) Error() string {
	return fmt.Sprintf("mesh partial: %d of %d pairs failed", e.failed, e.total)
}

// cmdMesh is 'rdmabench mesh'.
func cmdMesh(fs *flag.FlagSet) action {
	var d deviceFlags
	d.add(fs)
	tf := addTestFlags(fs)
	ef := addExpectFlags(fs)
	pattern := fs.String("pattern", mesh.PatternPairs, "pairs (every pair, in rounds of disjoint pairs), ring (i → i+1, all at once), all-to-one (incast onto --root), bisection (lower half → upper half, every cross pair, one full cross-section per round)")
	root := fs.Int("root", 0, "all-to-one: the rank every other rank sends to")
	deviceMap := fs.String("device-map", "", "devices by local rank (the rank's index among the ranks on its host), e.g. mlx5_0,mlx5_1: local rank i uses entry i mod the list's length; default: -d, or by route")
	netFlag := fs.String("net", "", "control network, e.g. 10.0.0.0/8: each rank's servers bind to its address in it (default: the address of the default route)")
	port := fs.IntP("port", "p", 0, "first TCP control port of the servers on a host (local rank l's slot s uses PORT + l×slots + s); 0: ephemeral ports, exchanged through the launcher")
	roundTimeout := fs.Duration("round-timeout", 5*time.Minute, "the longest the bootstrap, one pair's tests, or rank 0's wait at a barrier may take; a pair past it is failed, a rank that misses a barrier runs its remaining rounds unsynchronised")
	connTimeout := fs.Duration("connect-timeout", 30*time.Second, "give up connecting to a peer's server after this long")
	unit := fs.String("unit", result.UnitMiB, "bandwidth unit of the matrix: MiB, MB, Gb")
	outlierK := fs.Float64("outlier-k", 3, "outliers: pairs more than this many robust deviations (1.4826 × MAD) worse than the fabric's median")
	jsonPath := fs.String("json", "", "rank 0 writes the mesh document to this file (- for stdout); with rails one file per rail, FILE with .railN before its extension")
	rails := fs.Bool("rails", false, "one matrix per rail: NIC i of each host with NIC i of the others, every device with an active port in rail order (NUMA node, then PCI address, then name)")
	railDevs := fs.String("rail-devices", "", "the rails as this list of devices, in order, on every host, e.g. mlx5_0,mlx5_1 (implies --rails)")
	railsParallel := fs.Bool("rails-parallel", false, "with rails, run each round on every rail at once (default: rail after rail)")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if fs.NArg() != 0 {
			return usageError{fmt.Errorf("mesh takes no arguments (got %q): the launcher says where the ranks run", fs.Args())}
		}
		if err := checkUnit(*unit); err != nil {
			return err
		}
		if strings.Contains(d.device, ",") {
			return usageError{fmt.Errorf("mesh -d %s: one device per rank; several ranks per host take --device-map", d.device)}
		}
		if *roundTimeout < time.Second {
			return usageError{fmt.Errorf("--round-timeout %v: at least 1s", *roundTimeout)}
		}
		if *port < 0 || *port > 65535 {
			return usageError{fmt.Errorf("--port %d out of range 0..65535", *port)}
		}
		if *outlierK <= 0 {
			return usageError{fmt.Errorf("--outlier-k %g: must be positive", *outlierK)}
		}
		var prefix netip.Prefix
		if *netFlag != "" {
			var err error
			if prefix, err = netip.ParsePrefix(*netFlag); err != nil {
				return usageError{fmt.Errorf("--net %q: want a prefix such as 10.0.0.0/8", *netFlag)}
			}
			prefix = prefix.Masked()
		}
		var railList []string
		if *railDevs != "" {
			for _, s := range strings.Split(*railDevs, ",") {
				if s = strings.TrimSpace(s); s == "" {
					return usageError{fmt.Errorf("--rail-devices %q: an empty device name", *railDevs)}
				}
				railList = append(railList, s)
			}
			*rails = true
		}
		switch {
		case *rails && (*deviceMap != "" || d.device != ""):
			return usageError{fmt.Errorf("--rails takes each host's devices as its rails: not with -d or --device-map")}
		case *railsParallel && !*rails:
			return usageError{fmt.Errorf("--rails-parallel needs --rails or --rail-devices")}
		case *rails && *jsonPath == "-":
			return usageError{fmt.Errorf("--rails writes one document per rail: --json takes a file, not -")}
		}
		var devs []string
		if *deviceMap != "" {
			for _, s := range strings.Split(*deviceMap, ",") {
				if s = strings.TrimSpace(s); s == "" {
					return usageError{fmt.Errorf("--device-map %q: an empty device name", *deviceMap)}
				}
				devs = append(devs, s)
			}
		} else if d.device != "" {
			devs = []string{d.device}
		}
		specs, err := tf.specs(fs)
		if err != nil {
			return err
		}
		exp, err := ef.parse(specs)
		if err != nil {
			return err
		}
		// The launcher relays stdout and stderr: when it goes away first (it
		// lost a rank), a write must fail with EPIPE, not kill rank 0 before it
		// has written its document.
		signal.Ignore(syscall.SIGPIPE)
		b, err := boot.FromEnv()
		if err != nil {
			var nl boot.NotLaunchedError
			if errors.As(err, &nl) {
				return usageError{err}
			}
			return err
		}
		if _, err := mesh.Schedule(*pattern, b.Size(), *root); err != nil {
			b.Close()
			return usageError{err}
		}
		var progress io.Writer
		if !*quiet {
			progress = stderr
		}
		if *rails {
			if railList, err = mesh.RailDevices(railList, max(d.port, 1)); err != nil {
				b.Close()
				return err
			}
		}
		out, err := mesh.Run(ctx, mesh.Config{Boot: b, Pattern: *pattern, Root: *root, Specs: specs,
			Client:    clientConfig(d, *tf.transport, *tf.rdmaCM),
			DeviceMap: devs, Rails: railList, RailsParallel: *railsParallel, Net: prefix, Port: *port, RoundTimeout: *roundTimeout, ConnTimeout: *connTimeout,
			CommandLine: os.Args, Log: progress})
		if err != nil {
			return err
		}
		if out.Doc != nil {
			failed, total, err := mesh.Output(out, mesh.OutputConfig{JSON: *jsonPath, Unit: *unit, OutlierK: *outlierK, W: stdout})
			if err != nil {
				return err
			}
			if out.Partial() {
				return partialError{failed, total}
			}
			var vs []expect.Verdict // each pair of each rail judged
			for _, doc := range out.Docs() {
				vs = append(vs, expect.JudgeMesh(doc, exp)...)
			}
			w := stdout
			if *jsonPath == "-" {
				w = stderr
			}
			if err := expect.Write(w, vs); err != nil {
				return err
			}
			return expect.Outcome(vs)
		}
		if out.Error != nil {
			fmt.Fprintf(stderr, "rdmabench: mesh rank %d: %v\n", b.Rank(), out.Error)
		}
		if out.Partial() {
			return partialError{out.OwnFailed(), len(out.Own)}
		}
		return nil
	}
}

// clientConfig is the client side of every pair: the device comes from the
// device map, the rest from the flags.
func clientConfig(d deviceFlags, transport string, rdmaCM bool) bench.ClientConfig {
	return bench.ClientConfig{Port: d.port, GIDIndex: d.gidIndex, Transport: transport, RDMACM: rdmaCM,
		Run: measure.Options{CPU: -1, Unit: result.UnitMiB}}
}
