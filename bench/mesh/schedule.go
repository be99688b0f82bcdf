package mesh

import (
	"fmt"
	"slices"
)

// Patterns of a mesh run (--pattern).
const (
	PatternPairs     = "pairs"      // every unordered pair, in rounds where each rank has at most one test
	PatternRing      = "ring"       // rank i → i+1, all at once
	PatternAllToOne  = "all-to-one" // every rank → the root, all at once (incast)
	PatternBisection = "bisection"  // lower half → upper half, every cross pair, one full cross-section per round
)

// Patterns lists the patterns, default first.
var Patterns = []string{PatternPairs, PatternRing, PatternAllToOne, PatternBisection}

// Pair is one measured pair: Client runs the tests against Server's server.
type Pair struct {
	Client, Server int
}

// Round is the pairs measured at the same time.
type Round []Pair

// ScheduleError is a pattern that cannot be laid out for the ranks given.
type ScheduleError struct {
	Pattern string
	Ranks   int
	Reason  string
}

func (e *ScheduleError) Error() string {
	return fmt.Sprintf("mesh: pattern %q with %d ranks: %s", e.Pattern, e.Ranks, e.Reason)
}

// Schedule lays out pattern over n ranks (root is all-to-one's target).
//
//   - pairs: a round-robin tournament (the circle method): n−1 rounds for
//     even n, n rounds for odd n (one rank sits out each round); every
//     unordered pair once; each rank in at most one test per round, client
//     about as often as server.
//   - ring: one round, i → (i+1) mod n for every i.
//   - all-to-one: one round, every rank but root → root.
//   - bisection: lower half [0, n/2) against upper half [n/2, n): round k
//     has lower i → upper n/2 + (i+k) mod (n−n/2); n−n/2 rounds, every cross
//     pair once, the whole cross-section loaded in each round.
func Schedule(pattern string, n, root int) ([]Round, error) {
	if n < 2 {
		return nil, &ScheduleError{pattern, n, "a mesh needs at least 2 ranks"}
	}
	switch pattern {
	case PatternPairs:
		return tournament(n), nil
	case PatternRing:
		r := make(Round, 0, n)
		for i := range n {
			r = append(r, Pair{i, (i + 1) % n})
		}
		return []Round{r}, nil
	case PatternAllToOne:
		if root < 0 || root >= n {
			return nil, &ScheduleError{pattern, n, fmt.Sprintf("root rank %d is not in 0..%d", root, n-1)}
		}
		var r Round
		for i := range n {
			if i != root {
				r = append(r, Pair{i, root})
			}
		}
		return []Round{r}, nil
	case PatternBisection:
		h := n / 2
		u := n - h
		rounds := make([]Round, u)
		for k := range u {
			for i := range h {
				rounds[k] = append(rounds[k], Pair{i, h + (i+k)%u})
			}
		}
		return rounds, nil
	}
	return nil, &ScheduleError{pattern, n, fmt.Sprintf("unknown pattern; valid: %v", Patterns)}
}

// tournament is the circle method: player m−1 stays, the others rotate.
// With odd n a phantom player n makes m even; its opponent sits out.
func tournament(n int) []Round {
	m := n + n%2
	rounds := make([]Round, 0, m-1)
	for r := range m - 1 {
		var round Round
		add := func(a, b int) {
			if a >= n || b >= n {
				return // a bye
			}
			if a > b {
				a, b = b, a
			}
			if (a+b)%2 == 0 { // the smaller rank is client when a+b is odd
				a, b = b, a
			}
			round = append(round, Pair{a, b})
		}
		add(r, m-1)
		for k := 1; k < m/2; k++ {
			add((r+k)%(m-1), (r-k+m-1)%(m-1))
		}
		slices.SortFunc(round, func(x, y Pair) int { return min(x.Client, x.Server) - min(y.Client, y.Server) })
		rounds = append(rounds, round)
	}
	return rounds
}

// Inbound is how many clients reach rank at once at most, over all rounds:
// the servers (ports) the rank must run.
func Inbound(rounds []Round, rank int) int {
	most := 0
	for _, r := range rounds {
		n := 0
		for _, p := range r {
			if p.Server == rank {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// ServerSlot is which of the server's servers the pair at index i of round
// uses: its position among the round's pairs with the same server.
func ServerSlot(round Round, i int) int {
	slot := 0
	for _, p := range round[:i] {
		if p.Server == round[i].Server {
			slot++
		}
	}
	return slot
}
