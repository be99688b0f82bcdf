package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/internal/golden"
)

// mwuCases are run sets as the gate sees them: n against m runs (the
// exact test up to exactLimit without ties, else the normal
// approximation), shifted or not, with ties from rounding or none.
func mwuCases() []struct {
	name string
	x, y []float64
} {
	r := rand.New(rand.NewPCG(7, 11))
	var out []struct {
		name string
		x, y []float64
	}
	for _, nm := range [][2]int{{2, 2}, {3, 3}, {4, 4}, {5, 5}, {3, 7}, {8, 5}, {10, 10}, {20, 20}, {50, 50}, {51, 51}, {60, 40}} {
		for _, shift := range []float64{0, 0.5, 3} {
			for _, round := range []bool{false, true} {
				gen := func(k int, s float64) []float64 {
					v := make([]float64, k)
					for i := range v {
						v[i] = 10 + s + r.NormFloat64()
						if round {
							v[i] = math.Round(v[i] * 2) // ties
						}
					}
					return v
				}
				out = append(out, struct {
					name string
					x, y []float64
				}{fmt.Sprintf("%dv%d shift %g ties %v", nm[0], nm[1], shift, round), gen(nm[0], 0), gen(nm[1], shift)})
			}
		}
	}
	return out
}

// TestMannWhitneyPinned pins p and U of mwuCases to 12 significant digits
// (testdata/mwu_pinned.golden, made before the benchmath comparison).
func TestMannWhitneyPinned(t *testing.T) {
	var b strings.Builder
	for _, c := range mwuCases() {
		p, u, ok := MannWhitney(c.x, c.y)
		fmt.Fprintf(&b, "%s: p %.12g U %g ok %v\n", c.name, p, u, ok)
	}
	golden.Check(t, "mwu_pinned.golden", []byte(b.String()))
}

// BenchmarkMannWhitneyGate is the gate's test of one figure at --repeat 5
// on both sides: the exact distribution of 5 against 5 runs.
func BenchmarkMannWhitneyGate(b *testing.B) {
	x := []float64{41.2, 40.9, 41.8, 41.0, 42.3}
	y := []float64{44.1, 43.0, 45.2, 42.9, 44.0}
	for b.Loop() {
		MannWhitney(x, y)
	}
}

// BenchmarkMannWhitneyTies has ties: the normal approximation.
func BenchmarkMannWhitneyTies(b *testing.B) {
	x := []float64{1, 2, 2, 3, 3, 3, 4, 5, 5, 6}
	y := []float64{4, 4, 5, 5, 6, 6, 7, 7, 8, 8}
	for b.Loop() {
		MannWhitney(x, y)
	}
}
