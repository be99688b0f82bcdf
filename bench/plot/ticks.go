package plot

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// percentileTicks labels an axis of log10(1/(1-q)) with percentiles: 0 is
// 0 %, 1 is 90 %, 2 is 99 %, and so on, with minor ticks between.
type percentileTicks struct{}

// maxTicks caps the ticks of one axis, whatever its range: an axis is
// drawn from checked values (result.Check), and this bound holds even if
// one were not.
const maxTicks = 2000

// finiteRange reports whether lo..hi is a finite range an axis can tick.
func finiteRange(lo, hi float64) bool {
	return !math.IsNaN(lo) && !math.IsNaN(hi) && !math.IsInf(lo, 0) && !math.IsInf(hi, 0) && hi-lo < 1e6
}

func (percentileTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finiteRange(lo, hi) {
		return nil
	}
	var ticks []plot.Tick
	for e := 0; float64(e) <= hi+1e-9 && len(ticks) < maxTicks; e++ {
		label := "0%"
		if e > 0 {
			label = strconv.FormatFloat(100-100/math.Pow10(e), 'f', max(e-2, 0), 64) + "%"
		}
		ticks = append(ticks, plot.Tick{Value: float64(e), Label: label})
		for m := 2; m < 10; m++ {
			if v := float64(e) + math.Log10(float64(m)); v < hi {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

// logTicks labels an axis of log10(v) with v at powers of ten, and at 2 and
// 5 times them when fewer than three powers of ten are in range, with minor
// ticks between.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finiteRange(lo, hi) || hi-lo > maxTicks/10 {
		return nil
	}
	e0, e1 := math.Floor(lo+1e-9), math.Ceil(hi-1e-9)
	dense := math.Floor(hi+1e-9)-math.Ceil(lo-1e-9) < 2
	var ticks []plot.Tick
	for e := e0; e <= e1; e++ {
		for m := 1; m < 10; m++ {
			x := e + math.Log10(float64(m))
			if x < lo-1e-9 || x > hi+1e-9 {
				continue
			}
			t := plot.Tick{Value: x}
			if m == 1 || dense && (m == 2 || m == 5) {
				t.Label = strconv.FormatFloat(roundSig(float64(m)*math.Pow(10, e)), 'f', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// linearTicks labels a linear axis every 1, 2 or 5 times a power of ten, 4
// to 10 labels in all, with minor ticks between.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(roundSig(lo), 'f', -1, 64)}}
	}
	step := niceCeil((hi - lo) / 8)
	mant := math.Round(step / math.Pow(10, math.Floor(math.Log10(step))))
	minor := step / 5
	if mant == 2 {
		minor = step / 4
	}
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for i := math.Ceil(lo/minor - 1e-9); i*minor <= hi+minor*1e-9 && len(ticks) < maxTicks; i++ {
		v := i * minor
		if math.Abs(v) < minor*1e-6 {
			v = 0 // not -0
		}
		t := plot.Tick{Value: v}
		if r := math.Mod(math.Abs(v)/step+1e-9, 1); r < 2e-9 {
			t.Label = strconv.FormatFloat(v, 'f', prec, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

func fractionTicks() []plot.Tick {
	var ticks []plot.Tick
	for i := 0; i <= 20; i++ {
		t := plot.Tick{Value: float64(i) / 20}
		if i%2 == 0 {
			t.Label = strconv.FormatFloat(t.Value, 'f', -1, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// roundSig rounds v to 6 significant digits, hiding float noise in 10^e.
func roundSig(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return f
}

// niceFloor returns the largest 1, 2 or 5 times a power of ten at or below v.
func niceFloor(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*d <= v*(1+1e-9) {
			return roundSig(m * d)
		}
	}
	return d
}

// niceCeil returns the smallest 1, 2 or 5 times a power of ten at or above v.
func niceCeil(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*d >= v*(1-1e-9) {
			return roundSig(m * d)
		}
	}
	return 10 * d
}
