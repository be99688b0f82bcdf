package mesh

import (
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/version"
)

// assemble builds rank 0's document from the reports: every scheduled pair
// appears once, failed when its client's report is missing; lost says why
// each missing report is missing.
func assemble(cfg Config, start time.Time, launcher string, rounds []Round, all []rankInfo, reports map[int]Report, lost map[int]string) *result.MeshDocument {
	doc := &result.MeshDocument{SchemaVersion: result.MeshSchemaVersion, Kind: result.KindMesh, Tool: "rdmabench",
		ToolVersion: version.String(), CommandLine: cfg.CommandLine, Start: start, Launcher: launcher,
		Pattern: cfg.Pattern, Rounds: len(rounds), UnsyncedFrom: -1, Outcome: result.MeshComplete}
	if cfg.Pattern == PatternAllToOne {
		doc.Root = cfg.Root
	}
	if doc.CommandLine == nil {
		doc.CommandLine = os.Args
	}
	type key struct{ round, client, server int }
	got := map[key]result.MeshPair{}
	for _, r := range reports {
		for _, p := range r.Pairs {
			got[key{p.Round, p.Client, p.Server}] = p
		}
		if r.UnsyncedFrom >= 0 && (doc.UnsyncedFrom < 0 || r.UnsyncedFrom < doc.UnsyncedFrom) {
			doc.UnsyncedFrom = r.UnsyncedFrom
		}
		for _, w := range r.Warnings {
			doc.Warnings = append(doc.Warnings, fmt.Sprintf("rank %d: %s", r.Rank, w))
		}
	}
	sort.Strings(doc.Warnings)
	failed := map[int]bool{}
	for ri, round := range rounds {
		for _, p := range round {
			mp, ok := got[key{ri, p.Client, p.Server}]
			if !ok {
				mp = result.MeshPair{Round: ri, Client: p.Client, Server: p.Server,
					ClientHost: all[p.Client].Host, ServerHost: all[p.Server].Host, Status: result.StatusFailed,
					Error: fmt.Sprintf("rank %d (%s) is lost: %s", p.Client, all[p.Client].Host, lostWhy(lost, p.Client))}
			}
			if mp.Results == nil {
				mp.Results = []result.Result{}
			}
			if mp.Status != result.StatusOK {
				doc.Outcome = result.MeshPartial
				failed[p.Client] = true
			}
			doc.Pairs = append(doc.Pairs, mp)
		}
	}
	for _, ri := range all {
		mr := result.MeshRank{Rank: ri.Rank, Host: ri.Host, LocalRank: ri.LocalRank, Addr: ri.Addr,
			Ports: ri.Ports, Device: ri.Device, Status: result.StatusOK}
		if mr.Ports == nil {
			mr.Ports = []int{}
		}
		r, ok := reports[ri.Rank]
		switch {
		case !ok:
			mr.Status, mr.Error = result.StatusLost, "no report reached rank 0: "+lostWhy(lost, ri.Rank)
			doc.Outcome = result.MeshPartial
		case failed[ri.Rank]:
			mr.Status = result.StatusFailed
		}
		if ok {
			mr.Env = r.Env
		}
		if mr.Env == nil { // a rank that was never client: its env as a server
			for _, p := range doc.Pairs {
				if p.Server == ri.Rank && p.ServerEnv != nil {
					mr.Env = p.ServerEnv
					break
				}
			}
		}
		doc.Ranks = append(doc.Ranks, mr)
	}
	doc.Fairness = result.MeshFairnessOf(doc) // all-to-one only
	doc.End = time.Now()
	return doc
}

func lostWhy(lost map[int]string, rank int) string {
	if w := lost[rank]; w != "" {
		return w
	}
	return "its report never reached rank 0"
}
