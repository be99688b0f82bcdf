package cliffs

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
)

// progress writes the plan line and one progress line per point to w
// (stderr): redrawn in place on a terminal, one line each otherwise.
type progress struct {
	w         io.Writer
	term      bool
	total     int // the most points the search may measure
	start     time.Time
	est       time.Duration // for total points
	ladderEst time.Duration // for the ladder alone
	timed     bool          // est is known (duration mode)
	drawn     bool
}

// plan says the plan before the first point.
func (p *progress) plan(c Config, doc *result.CliffsDocument, figure string) {
	if p.w == nil {
		return
	}
	per := "an iteration count each: the time is not known before the first point"
	if p.timed {
		per = fmt.Sprintf("%v each: about %s for the ladder, at most %s with every bisection", time.Duration(doc.RunDurationNS),
			round(p.ladderEst), round(p.est))
	}
	fmt.Fprintf(p.w, "rdmabench cliffs: %s along %s %s: %d ladder points, up to %s in each of the first %d falls (at most %d points), "+
		"%s a point of %s; knee: %s worse by %.0f%% or more\n",
		doc.Test, doc.Axis, ladderText(doc.Ladder), len(doc.Ladder), plural(doc.MaxBisections, "bisection step"), min(RefinedFalls, len(doc.Ladder)-1), p.total,
		plural(doc.Runs, "run"), per, figure, doc.MinDrop*100)
}

// point says that point n (1-based) starts.
func (p *progress) point(n int, axis string, v int, stage string) {
	if p.w == nil {
		return
	}
	const width = 20
	fill := min(width, width*(n-1)/max(p.total, 1))
	el := time.Since(p.start)
	left := ""
	if p.timed {
		left = fmt.Sprintf(", at most %s left", round(max(p.est-el, 0)))
	}
	line := fmt.Sprintf("cliffs [%s%s] point %d (at most %d): %s %d (%s), %s elapsed%s",
		strings.Repeat("#", fill), strings.Repeat(".", width-fill), n, p.total, axis, v, stage, round(el), left)
	if p.term {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.drawn = true
		return
	}
	fmt.Fprintln(p.w, line)
}

// done ends the progress line.
func (p *progress) done() {
	if p.w == nil {
		return
	}
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "cliffs: done in %s\n", round(time.Since(p.start)))
}

// plural is "1 run", "3 runs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }

// ladderText is "1..256 (×2)" for a geometric ladder, the list otherwise.
func ladderText(vs []int) string {
	if len(vs) > 2 && vs[1] == 2*vs[0] && vs[len(vs)-2]*2 >= vs[len(vs)-1] {
		geo := true
		for i := 1; i < len(vs)-1; i++ {
			geo = geo && vs[i] == 2*vs[i-1]
		}
		if geo {
			return fmt.Sprintf("%d..%d (×2)", vs[0], vs[len(vs)-1])
		}
	}
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ",")
}
