// Package meshcheck checks and edits mesh documents for the mesh stages
// (internal/e2e/exp/mesh: make mesh-test, mesh-demo, mesh-slurm, mesh-ompi;
// the one-guest mesh stage of make test); scripts/meshcheck is its command:
//
//	meshcheck complete FILE N OPS [modes=lat,bw] [hosts=N] [launcher=SUBSTRING]
//	                                  every pair of an N-rank pairs run measured, with
//	                                  p50/p99/p99.9 (lat) and bandwidth (bw) for each op of OPS,
//	                                  the ranks on that many hosts (N: one rank per host),
//	                                  the launcher naming SUBSTRING (e.g. slurm)
//	meshcheck local FILE N DEVICE PORT  N ranks on one host: local ranks 0..N-1, each on
//	                                  DEVICE, local rank l's server on port PORT+l
//	meshcheck killed FILE RANK        a partial run: RANK lost, its pairs as client failed,
//	                                  every pair without RANK measured
//	meshcheck raise IN OUT PAIR F     multiply the lat p99 of pair index PAIR by F
//
// Run prints what it checked and returns the first failed check.
package meshcheck

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
	"github.com/rdmabench/rdmabench/hist"
)

// Run runs one check (args as the command's: complete FILE N OPS ..., local
// FILE N DEVICE PORT, killed FILE RANK, raise IN OUT PAIR F) and prints what
// it checked to w.
func Run(w io.Writer, args ...string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: meshcheck complete FILE N OPS [modes=M] [hosts=N] [launcher=S] | killed FILE RANK | raise IN OUT PAIR F")
	}
	b, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	if err := schema.Validate(b); err != nil {
		return fmt.Errorf("%s: %w", args[1], err)
	}
	doc, err := result.ParseMesh(b, args[1])
	if err != nil {
		return err
	}
	switch args[0] {
	case "complete":
		if len(args) < 4 {
			return fmt.Errorf("complete FILE N OPS [modes=lat,bw] [hosts=N] [launcher=SUBSTRING]")
		}
		n, _ := strconv.Atoi(args[2])
		modes, hosts := []string{result.ModeLat, result.ModeBW}, n
		for _, a := range args[4:] {
			k, v, _ := strings.Cut(a, "=")
			switch k {
			case "modes":
				modes = strings.Split(v, ",")
			case "hosts":
				hosts, _ = strconv.Atoi(v)
			case "launcher":
				if !strings.Contains(doc.Launcher, v) {
					return fmt.Errorf("launcher %q, want one naming %q", doc.Launcher, v)
				}
			default:
				return fmt.Errorf("complete: unknown option %q", a)
			}
		}
		return Complete(w, doc, n, strings.Split(args[3], ","), modes, hosts)
	case "local":
		if len(args) != 5 {
			return fmt.Errorf("local FILE N DEVICE PORT")
		}
		n, _ := strconv.Atoi(args[2])
		port, _ := strconv.Atoi(args[4])
		return Local(w, doc, n, args[3], port)
	case "killed":
		rank, _ := strconv.Atoi(args[2])
		return Killed(w, doc, rank)
	case "raise":
		if len(args) != 5 {
			return fmt.Errorf("raise IN OUT PAIR F")
		}
		i, _ := strconv.Atoi(args[3])
		f, err := strconv.ParseFloat(args[4], 64)
		if err != nil || i < 0 || i >= len(doc.Pairs) {
			return fmt.Errorf("raise: pair %q of %d, factor %q", args[3], len(doc.Pairs), args[4])
		}
		for j := range doc.Pairs[i].Results {
			r := &doc.Pairs[i].Results[j]
			if r.Mode == result.ModeLat {
				r.Latency.P99.NS *= f
				for k := range r.Latency.Percentiles {
					if q := &r.Latency.Percentiles[k]; q.P == 99 {
						q.Value.NS, q.CILow.NS, q.CIHigh.NS = q.Value.NS*f, q.CILow.NS*f, q.CIHigh.NS*f
					}
				}
			}
		}
		fmt.Fprintf(w, "meshcheck: raised the lat p99 of pair %s by ×%g\n", doc.Pairs[i].Name(), f)
		return result.WriteMeshJSON(args[2], doc)
	}
	return fmt.Errorf("unknown check %q", args[0])
}

// Complete checks an n-rank pairs run: every pair measured, with p50/p99/p99.9
// (lat) and bandwidth (bw) for each op, each percentile present exactly when
// the samples back it, the ranks on nhosts hosts.
func Complete(w io.Writer, doc *result.MeshDocument, n int, ops, modes []string, nhosts int) error {
	if doc.Outcome != result.MeshComplete || len(doc.Ranks) != n || len(doc.Pairs) != n*(n-1)/2 {
		return fmt.Errorf("outcome %s, %d ranks, %d pairs; want complete, %d, %d", doc.Outcome, len(doc.Ranks), len(doc.Pairs), n, n*(n-1)/2)
	}
	hosts := map[string]bool{}
	for _, r := range doc.Ranks {
		hosts[r.Host] = true
		if r.Env == nil {
			return fmt.Errorf("rank %d has no environment", r.Rank)
		}
	}
	if len(hosts) != nhosts {
		return fmt.Errorf("ranks on %d hosts, want %d", len(hosts), nhosts)
	}
	for _, p := range doc.Pairs {
		if p.Status != result.StatusOK || (nhosts == n && p.ClientHost == p.ServerHost) {
			return fmt.Errorf("pair %s: %s %s", p.Name(), p.Status, p.Error)
		}
		for _, op := range ops {
			var lat, bw bool
			for _, r := range p.Results {
				if r.Op != op || r.Histogram == "" {
					continue
				}
				switch r.Mode {
				case result.ModeLat:
					// each percentile present exactly when the samples back it
					// (hist.MinSamples: its confidence interval stays in the data)
					lat = r.Latency.P50.OK
					for _, q := range []struct {
						p  float64
						ok bool
					}{{50, r.Latency.P50.OK}, {99, r.Latency.P99.OK}, {99.9, r.Latency.P99_9.OK}} {
						if want := r.Samples >= hist.MinSamples(q.p, hist.DefaultConfidence); q.ok != want {
							return fmt.Errorf("pair %s %s lat: p%g present %v with %d samples", p.Name(), op, q.p, q.ok, r.Samples)
						}
					}
				case result.ModeBW:
					bw = r.Bandwidth.MBPerSec > 0
				}
			}
			if (slices.Contains(modes, result.ModeLat) && !lat) || (slices.Contains(modes, result.ModeBW) && !bw) {
				return fmt.Errorf("pair %s %s: latency %v, bandwidth %v", p.Name(), op, lat, bw)
			}
		}
	}
	fmt.Fprintf(w, "meshcheck: %d ranks on %d hosts, %d pairs complete with %s (%s)\n", n, len(hosts), len(doc.Pairs),
		strings.Join(ops, ", "), strings.Join(modes, ", "))
	return nil
}

// Local checks N ranks on one host: distinct local ranks, the device map
// applied, each local rank's server on its own port.
func Local(w io.Writer, doc *result.MeshDocument, n int, device string, port int) error {
	if len(doc.Ranks) != n {
		return fmt.Errorf("%d ranks, want %d", len(doc.Ranks), n)
	}
	for _, r := range doc.Ranks {
		if r.Host != doc.Ranks[0].Host || r.LocalRank != r.Rank || r.Device != device ||
			len(r.Ports) != 1 || r.Ports[0] != port+r.LocalRank {
			return fmt.Errorf("rank %d: host %s, local rank %d, device %q, ports %v; want host %s, local rank %d, device %s, port %d",
				r.Rank, r.Host, r.LocalRank, r.Device, r.Ports, doc.Ranks[0].Host, r.Rank, device, port+r.Rank)
		}
	}
	for _, p := range doc.Pairs {
		if p.Env == nil || (device != "" && p.Env.Device != device) {
			return fmt.Errorf("pair %s: client device %v, want %s", p.Name(), p.Env, device)
		}
	}
	fmt.Fprintf(w, "meshcheck: %d ranks on %s, local ranks 0..%d, all on %s, ports %d..%d\n", n, doc.Ranks[0].Host, n-1, device, port, port+n-1)
	return nil
}

// Killed checks a partial run: rank lost, its pairs as client failed, every
// pair without it measured.
func Killed(w io.Writer, doc *result.MeshDocument, rank int) error {
	if doc.Outcome != result.MeshPartial || rank >= len(doc.Ranks) || doc.Ranks[rank].Status != result.StatusLost {
		return fmt.Errorf("outcome %s, rank %d status %v; want partial and lost", doc.Outcome, rank, doc.Ranks)
	}
	failed := 0
	for _, p := range doc.Pairs {
		ok := p.Status == result.StatusOK
		if (p.Client == rank && ok) || (p.Client != rank && p.Server != rank && !ok) {
			return fmt.Errorf("pair %s: %s %s", p.Name(), p.Status, p.Error)
		}
		if !ok {
			failed++
		}
	}
	fmt.Fprintf(w, "meshcheck: partial run, rank %d (%s) lost, %d of %d pairs failed, the others measured\n", rank, doc.Ranks[rank].Host, failed, len(doc.Pairs))
	return nil
}
