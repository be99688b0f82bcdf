package mesh

import (
	"errors"
	"testing"
)

func TestSchedule(t *testing.T) {
	for _, c := range []struct {
		pattern string
		n       int
		rounds  int
		pairs   int // total
		oneEach bool
		cover   bool // every unordered pair exactly once
	}{
		{PatternPairs, 2, 1, 1, true, true},
		{PatternPairs, 3, 3, 3, true, true},
		{PatternPairs, 4, 3, 6, true, true},
		{PatternPairs, 7, 7, 21, true, true},
		{PatternPairs, 8, 7, 28, true, true},
		{PatternPairs, 64, 63, 2016, true, true},
		{PatternRing, 3, 1, 3, false, false},
		{PatternRing, 5, 1, 5, false, false},
		{PatternAllToOne, 4, 1, 3, false, false},
		{PatternBisection, 4, 2, 4, true, false},
		{PatternBisection, 5, 3, 6, true, false},
		{PatternBisection, 8, 4, 16, true, false},
	} {
		rounds, err := Schedule(c.pattern, c.n, 0)
		if err != nil {
			t.Fatalf("%s/%d: %v", c.pattern, c.n, err)
		}
		if len(rounds) != c.rounds {
			t.Errorf("%s/%d: %d rounds, want %d", c.pattern, c.n, len(rounds), c.rounds)
		}
		seen := map[[2]int]int{}
		total := 0
		for ri, r := range rounds {
			busy := map[int]bool{}
			for _, p := range r {
				total++
				if p.Client == p.Server || p.Client < 0 || p.Server >= c.n || p.Server < 0 || p.Client >= c.n {
					t.Errorf("%s/%d round %d: bad pair %v", c.pattern, c.n, ri, p)
				}
				if c.oneEach && (busy[p.Client] || busy[p.Server]) {
					t.Errorf("%s/%d round %d: a rank in two tests: %v", c.pattern, c.n, ri, r)
				}
				busy[p.Client], busy[p.Server] = true, true
				seen[[2]int{min(p.Client, p.Server), max(p.Client, p.Server)}]++
			}
		}
		if total != c.pairs {
			t.Errorf("%s/%d: %d pairs, want %d", c.pattern, c.n, total, c.pairs)
		}
		if c.cover {
			if len(seen) != c.n*(c.n-1)/2 {
				t.Errorf("%s/%d: %d distinct pairs, want %d", c.pattern, c.n, len(seen), c.n*(c.n-1)/2)
			}
			for k, v := range seen {
				if v != 1 {
					t.Errorf("%s/%d: pair %v measured %d times", c.pattern, c.n, k, v)
				}
			}
		}
		if c.pattern == PatternBisection {
			for _, r := range rounds {
				for _, p := range r {
					if p.Client >= c.n/2 || p.Server < c.n/2 {
						t.Errorf("bisection/%d: pair %v does not cross the halves", c.n, p)
					}
				}
			}
		}
	}
}

func TestScheduleBalance(t *testing.T) {
	rounds, _ := Schedule(PatternPairs, 8, 0)
	client := map[int]int{}
	for _, r := range rounds {
		for _, p := range r {
			client[p.Client]++
		}
	}
	for rank := range 8 {
		if c := client[rank]; c < 2 || c > 5 {
			t.Errorf("rank %d is client in %d of 7 tests", rank, c)
		}
	}
}

func TestScheduleErrors(t *testing.T) {
	for _, c := range []struct {
		pattern string
		n, root int
	}{{PatternPairs, 1, 0}, {"star", 4, 0}, {PatternAllToOne, 4, 4}, {PatternAllToOne, 4, -1}} {
		_, err := Schedule(c.pattern, c.n, c.root)
		var se *ScheduleError
		if !errors.As(err, &se) {
			t.Errorf("Schedule(%q, %d, %d) = %v, want a *ScheduleError", c.pattern, c.n, c.root, err)
		}
	}
}

func TestInboundAndSlots(t *testing.T) {
	rounds, _ := Schedule(PatternAllToOne, 5, 2)
	if got := Inbound(rounds, 2); got != 4 {
		t.Errorf("Inbound(root) = %d, want 4", got)
	}
	if got := Inbound(rounds, 0); got != 0 {
		t.Errorf("Inbound(0) = %d, want 0", got)
	}
	for i := range rounds[0] {
		if s := ServerSlot(rounds[0], i); s != i {
			t.Errorf("slot of pair %d = %d, want %d", i, s, i)
		}
	}
	pr, _ := Schedule(PatternPairs, 6, 0)
	for rank := range 6 {
		if got := Inbound(pr, rank); got != 1 {
			t.Errorf("pairs: Inbound(%d) = %d, want 1", rank, got)
		}
	}
}

func TestRailPath(t *testing.T) {
	for _, c := range []struct {
		in   string
		r    int
		want string
	}{{"mesh.json", 0, "mesh.rail0.json"}, {"/out/m.json", 2, "/out/m.rail2.json"}, {"mesh", 1, "mesh.rail1"}} {
		if got := RailPath(c.in, c.r); got != c.want {
			t.Errorf("RailPath(%q, %d) = %q, want %q", c.in, c.r, got, c.want)
		}
	}
}
