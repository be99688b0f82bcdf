package plot

// Text that fits: the title wrapped to the picture's width and the legend
// given the room its names need, measured with a glyph width estimate that
// holds for the wide fallback fonts a viewer may substitute for the one the
// SVG names (Liberation Serif is narrow; DejaVu is not).

import (
	"errors"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// glyphEm is the estimated advance of r in ems: generous, so that a
// string measured so fits in any common font.
func glyphEm(r rune) float64 {
	switch {
	case strings.ContainsRune("iljtfrI.,:;'|!()[] ", r):
		return 0.4
	case strings.ContainsRune("mwMW@%", r):
		return 0.95
	case r >= 'A' && r <= 'Z':
		return 0.75
	}
	return 0.62
}

// textWidth is the estimated width of s's longest line at size.
func textWidth(s string, size vg.Length) vg.Length {
	var widest float64
	for _, line := range strings.Split(s, "\n") {
		var w float64
		for _, r := range line {
			w += glyphEm(r)
		}
		widest = max(widest, w)
	}
	return vg.Length(widest) * size
}

// styleWidth is the larger of sty's own measure of s and the estimate.
func styleWidth(sty text.Style, s string) vg.Length {
	return max(sty.Width(s), textWidth(s, sty.Font.Size))
}

// wrapText breaks each line of s that is wider than width (at size) at a
// space: the last that fits, unless one after "; ", before "(" or after ", "
// that keeps at least 3/5 of that line fits too (in that order). A word
// wider than width stays whole.
func wrapText(s string, size, width vg.Length) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for textWidth(line, size) > width {
			cut := lastFit(line, " ", size, width)
			if cut <= 0 {
				break
			}
			for _, sep := range []string{"; ", " (", ", "} {
				if c := lastFit(line, sep, size, width); c > 0 && 5*c >= 3*cut {
					cut = c
					break
				}
			}
			out = append(out, strings.TrimRight(line[:cut], " "))
			line = strings.TrimLeft(line[cut:], " ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// lastFit is the end of the longest head of line that ends at a space of
// sep ("; ": after the ";") and fits in width, or -1.
func lastFit(line, sep string, size, width vg.Length) int {
	at := strings.IndexByte(sep, ' ')
	for i := strings.LastIndex(line, sep); i > 0; i = strings.LastIndex(line[:i], sep) {
		if c := i + at; c > 0 && textWidth(line[:c], size) <= width {
			return c
		}
	}
	return -1
}

// svgText is one <text> of an SVG as gonum's vgsvg writes it.
var svgText = regexp.MustCompile(`<text x="([-0-9.e]+)" y="[-0-9.e]+"[^>]*font-size:([0-9.]+)px">([^<]*)</text>`)
var svgWidth = regexp.MustCompile(`<svg width="([0-9.]+)pt"`)

// Overflows lists the texts of svg (a plot this package wrote) whose
// estimated extent (textWidth) runs past the picture's left or right edge,
// for the tests: the texts in left start at their x (legend names), the
// others are centred where gonum's own measure centres them (titles,
// labels).
func Overflows(svg []byte, left []string) ([]string, error) {
	m := svgWidth.FindSubmatch(svg)
	if m == nil {
		return nil, errors.New("plot: no <svg width=...pt>")
	}
	w, _ := strconv.ParseFloat(string(m[1]), 64)
	sty := plot.New().Title.TextStyle
	var out []string
	for _, t := range svgText.FindAllSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(string(t[1]), 64)
		size, _ := strconv.ParseFloat(string(t[2]), 64)
		s := html.UnescapeString(string(t[3]))
		sty.Font.Size = vg.Points(size)
		est := float64(textWidth(s, vg.Points(size)))
		lo := x + float64(sty.Width(s))/2 - est/2
		if slices.Contains(left, s) {
			lo = x
		}
		if lo < 0 || lo+est > w {
			out = append(out, fmt.Sprintf("%q: %.0f-%.0f pt of %.0f", s, lo, lo+est, w))
		}
	}
	return out, nil
}
