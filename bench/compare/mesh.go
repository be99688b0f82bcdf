package compare

import (
	"fmt"
	"io"
	"sort"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Mesh documents are compared pair by pair. A pair is matched across runs by
// its two ends, each named host#local-rank, in either direction (rank
// numbers may differ between runs; hosts do not).

// PairRegression is a regression of one pair of a mesh.
type PairRegression struct {
	Pair string // the new run's name of the pair, "host(rank)→host(rank)"
	Regression
}

// MeshGateReport is the outcome of GateMesh.
type MeshGateReport struct {
	Regressions []PairRegression
	// Failed names the pairs measured in the baseline that failed (or
	// are missing) in the new run: a regression too.
	Failed  []string
	Notes   []string
	Pairs   int // pairs measured in both runs
	Checked int // pair × test × metric comparisons, and fairness indexes
	// Fairness lists the all-to-one tests whose Jain index fell by more
	// than the bw limit (fairness.go).
	Fairness []FairnessRegression
}

// MeshRegressionError names every regressed pair.
type MeshRegressionError struct {
	Regressions []PairRegression
	Failed      []string
	Fairness    []FairnessRegression
}

func (e *MeshRegressionError) Error() string {
	var parts []string
	for _, f := range e.Failed {
		parts = append(parts, f+" failed")
	}
	for _, r := range e.Regressions {
		parts = append(parts, fmt.Sprintf("%s %s %s %+.1f%%", r.Pair, r.Test, r.Metric, r.Change*100))
	}
	for _, r := range e.Fairness {
		parts = append(parts, fmt.Sprintf("all-to-one %s fairness %+.1f%%", r.Test, r.Change*100))
	}
	return fmt.Sprintf("%d pair regressions:%s", len(parts), oneALine(parts))
}

// Err returns a *MeshRegressionError or nil.
func (g *MeshGateReport) Err() error {
	if len(g.Regressions) == 0 && len(g.Failed) == 0 && len(g.Fairness) == 0 {
		return nil
	}
	return &MeshRegressionError{Regressions: g.Regressions, Failed: g.Failed, Fairness: g.Fairness}
}

// pairKey matches a pair across runs: its ends, sorted.
func pairKey(d *result.MeshDocument, p *result.MeshPair) string {
	end := func(rank int, host string) string {
		lr := 0
		if rank < len(d.Ranks) {
			lr = d.Ranks[rank].LocalRank
		}
		return fmt.Sprintf("%s#%d", host, lr)
	}
	a, b := end(p.Client, p.ClientHost), end(p.Server, p.ServerHost)
	if a > b {
		a, b = b, a
	}
	return a + "|" + b
}

// MatchPairs returns, in the new run's order, the pairs of cur with their
// baseline pair (nil when base has none).
func MatchPairs(base, cur *result.MeshDocument) (curPairs, basePairs []*result.MeshPair) {
	byKey := map[string]*result.MeshPair{}
	for i := range base.Pairs {
		byKey[pairKey(base, &base.Pairs[i])] = &base.Pairs[i]
	}
	for i := range cur.Pairs {
		curPairs = append(curPairs, &cur.Pairs[i])
		basePairs = append(basePairs, byKey[pairKey(cur, &cur.Pairs[i])])
	}
	return curPairs, basePairs
}

// GateMesh runs Gate on every pair measured in both runs, with limits as
// for Gate, and names each regressed pair.
func GateMesh(base, cur *result.MeshDocument, limits map[string]float64) *MeshGateReport {
	g := &MeshGateReport{}
	cps, bps := MatchPairs(base, cur)
	seen := map[string]bool{}
	for i, cp := range cps {
		bp := bps[i]
		seen[pairKey(cur, cp)] = true
		switch {
		case bp == nil:
			g.Notes = append(g.Notes, fmt.Sprintf("not compared: %s (not in the baseline)", cp.Name()))
			continue
		case bp.Status != result.StatusOK:
			g.Notes = append(g.Notes, fmt.Sprintf("not compared: %s (failed in the baseline)", cp.Name()))
			continue
		case cp.Status != result.StatusOK:
			g.Failed = append(g.Failed, cp.Name())
			continue
		}
		g.Pairs++
		pg := Gate(base.AsDocument(*bp), cur.AsDocument(*cp), limits)
		g.Checked += pg.Checked
		for _, n := range pg.Notes {
			g.Notes = append(g.Notes, cp.Name()+": "+n)
		}
		for _, r := range pg.Regressions {
			g.Regressions = append(g.Regressions, PairRegression{Pair: cp.Name(), Regression: r})
		}
		for _, k := range pg.Missing { // a test of the baseline's pair the new pair lacks: not checked, not passed
			g.Failed = append(g.Failed, fmt.Sprintf("%s %s (missing in the new run)", cp.Name(), k))
		}
	}
	for i := range base.Pairs {
		bp := &base.Pairs[i]
		if !seen[pairKey(base, bp)] && bp.Status == result.StatusOK {
			g.Failed = append(g.Failed, bp.Name()+" (missing in the new run)")
		}
	}
	sort.SliceStable(g.Regressions, func(i, j int) bool { return g.Regressions[i].Change > g.Regressions[j].Change })
	fr, n, notes := gateFairness(base, cur, limits)
	g.Fairness, g.Checked, g.Notes = fr, g.Checked+n, append(g.Notes, notes...)
	return g
}

// WriteMeshTables writes, for each pair of the last run, the comparison
// table of that pair across all runs (Compare), under a "pair NAME:" line.
func WriteMeshTables(w io.Writer, docs []*result.MeshDocument, names []string, metrics []string, unit string, width int) error {
	last := docs[len(docs)-1]
	for i := range last.Pairs {
		cp := &last.Pairs[i]
		var pairDocs []*result.Document
		for _, d := range docs {
			_, bps := MatchPairs(d, &result.MeshDocument{Ranks: last.Ranks, Pairs: []result.MeshPair{*cp}})
			if bps[0] == nil {
				pairDocs = append(pairDocs, &result.Document{})
				continue
			}
			pairDocs = append(pairDocs, d.AsDocument(*bps[0]))
		}
		status := ""
		if cp.Status != result.StatusOK {
			status = " (FAILED in " + names[len(names)-1] + ")"
		}
		if _, err := fmt.Fprintf(w, "pair %s%s:\n", cp.Name(), status); err != nil {
			return err
		}
		if err := Compare(pairDocs, names).WriteTable(w, metrics, unit, width); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}
