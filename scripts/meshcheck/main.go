// Command meshcheck checks and edits mesh documents for the mesh stages of
// the Makefile (scripts/mesh-test.sh, scripts/mesh-demo.sh):
//
//	meshcheck complete FILE N OPS     every pair of an N-rank pairs run measured, with
//	                                  p50/p99/p99.9 (lat) and bandwidth (bw) for each op of OPS
//	meshcheck killed FILE RANK        a partial run: RANK lost, its pairs as client failed,
//	                                  every pair without RANK measured
//	meshcheck raise IN OUT PAIR F     multiply the lat p99 of pair index PAIR by F
//
// It prints what it checked and exits 1 on the first failed check.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "meshcheck:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: meshcheck complete FILE N OPS | killed FILE RANK | raise IN OUT PAIR F")
	}
	b, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	if err := result.Validate(b); err != nil {
		return fmt.Errorf("%s: %w", args[1], err)
	}
	doc, err := result.ParseMesh(b, args[1])
	if err != nil {
		return err
	}
	switch args[0] {
	case "complete":
		if len(args) != 4 {
			return fmt.Errorf("complete FILE N OPS")
		}
		n, _ := strconv.Atoi(args[2])
		return complete(doc, n, strings.Split(args[3], ","))
	case "killed":
		rank, _ := strconv.Atoi(args[2])
		return killed(doc, rank)
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
			}
		}
		fmt.Printf("meshcheck: raised the lat p99 of pair %s by ×%g\n", doc.Pairs[i].Name(), f)
		return result.WriteMeshJSON(args[2], doc)
	}
	return fmt.Errorf("unknown check %q", args[0])
}

func complete(doc *result.MeshDocument, n int, ops []string) error {
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
	if len(hosts) != n {
		return fmt.Errorf("ranks on %d hosts, want %d (one per host)", len(hosts), n)
	}
	for _, p := range doc.Pairs {
		if p.Status != result.StatusOK || p.ClientHost == p.ServerHost {
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
					lat = r.Latency.P50.OK && r.Latency.P99.OK
					if lat && !r.Latency.P99_9.OK && r.Iterations >= 1000 {
						return fmt.Errorf("pair %s %s lat: p99.9 n/a with %d iterations", p.Name(), op, r.Iterations)
					}
				case result.ModeBW:
					bw = r.Bandwidth.MBPerSec > 0
				}
			}
			if !lat || !bw {
				return fmt.Errorf("pair %s %s: latency %v, bandwidth %v", p.Name(), op, lat, bw)
			}
		}
	}
	fmt.Printf("meshcheck: %d ranks on %d hosts, %d pairs complete with %s latency and bandwidth\n", n, len(hosts), len(doc.Pairs), strings.Join(ops, ", "))
	return nil
}

func killed(doc *result.MeshDocument, rank int) error {
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
	fmt.Printf("meshcheck: partial run, rank %d (%s) lost, %d of %d pairs failed, the others measured\n", rank, doc.Ranks[rank].Host, failed, len(doc.Pairs))
	return nil
}
