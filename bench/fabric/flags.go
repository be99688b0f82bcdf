package fabric

import (
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// Marks of the flags, in the order they are checked and printed.
const (
	MarkRTT      = "R" // latency: RTT against RTT/2
	MarkInline   = "I" // messages inline on some fabrics, not on others
	MarkOpenLoop = "O" // open loop (--rate) against closed loop, or different rates
	MarkQPType   = "Q" // QP types differ (RC, UC, UD)
	MarkMRMode   = "M" // memory registration modes differ
	MarkQPs      = "N" // QP counts differ
)

// Flag marks a row whose results differ in a setting that makes the
// comparison, and its ratios, unfair.
type Flag struct {
	Mark   string      // one of the Mark constants
	Groups []FlagGroup // the distinct settings and the fabrics with each
}

// FlagGroup is one setting of a flagged row and the fabrics whose result
// has it (a TCP fabric's SEND stand-in is named with " (send)").
type FlagGroup struct {
	Value   string
	Fabrics []string
}

// Detail describes the settings of f, such as
// "RTT: RoCE rxe1 (rdma_rxe); RTT/2: TCP lo (send)".
func (f Flag) Detail() string {
	parts := make([]string, len(f.Groups))
	for i, g := range f.Groups {
		parts[i] = g.Value + ": " + strings.Join(g.Fabrics, ", ")
	}
	return strings.Join(parts, "; ")
}

// check is one setting compared across a row.
type check struct {
	mark  string
	title string // the footnote of the mark
	rdma  bool   // compared among RDMA results only (TCP has no such setting)
	// value returns the setting of r, as a key that decides whether two
	// results differ and the words that describe it; ok false when the
	// setting does not apply to r.
	value func(r *result.Result) (key, words string, ok bool)
}

var checks = []check{
	{mark: MarkRTT, title: "timed interval: a full round trip (RTT) against half of one (RTT/2)", value: timing},
	{mark: MarkInline, title: "inline: the message goes inline on some fabrics, not on others", rdma: true, value: inline},
	{mark: MarkOpenLoop, title: "open loop (--rate, timed from the intended send time) against closed loop, or different rates", value: loop},
	{mark: MarkQPType, title: "QP type differs", rdma: true, value: qpType},
	{mark: MarkMRMode, title: "memory registration mode differs", rdma: true, value: mrMode},
	{mark: MarkQPs, title: "QP count differs (bandwidth and completion latency are the aggregate of all QPs)", value: qpCount},
}

// MarkTitle returns what a mark means, or "" for an unknown mark.
func MarkTitle(mark string) string {
	for _, c := range checks {
		if c.mark == mark {
			return c.title
		}
	}
	return ""
}

func same(s string) (string, string, bool) { return s, s, true }

// timing classifies what a latency sample times: half a round trip when
// latency_ns is RTT/2 (rtt_ns present, a histogram divisor of 2, or a
// timed interval saying so), else a full round trip.
func timing(r *result.Result) (string, string, bool) {
	if r.Mode != result.ModeLat {
		return "", "", false
	}
	if r.RTT != nil || result.Divisor(r.HistogramDivisor) == 2 || strings.Contains(r.TimedInterval, "RTT/2") {
		return same("RTT/2")
	}
	return same("RTT")
}

// inline tells whether r's messages went inline: a message goes inline
// when it fits the QP's inline size. READ and atomics carry no payload.
func inline(r *result.Result) (string, string, bool) {
	if t, _ := spec.OpOf(r.Op); !t.Inline {
		return "", "", false
	}
	n := strconv.Itoa(r.Inline) + " B"
	if r.Inline > 0 && r.SizeBytes <= r.Inline {
		return "inline", "inline (inline size " + n + ")", true
	}
	return "not inline", "not inline (inline size " + n + ")", true
}

func loop(r *result.Result) (string, string, bool) {
	if r.OpenLoop == nil {
		return same("closed loop")
	}
	s := "open loop at " + strconv.FormatFloat(r.OpenLoop.RateTarget, 'g', -1, 64) + " ops/s"
	if r.OpenLoop.Schedule != "" {
		s += " (" + r.OpenLoop.Schedule + ")"
	}
	return same(s)
}

func qpType(r *result.Result) (string, string, bool) {
	if r.QPType == "" {
		return "", "", false // older results
	}
	return same(strings.ToUpper(r.QPType))
}

func mrMode(r *result.Result) (string, string, bool) {
	if r.MRMode == "" {
		return "", "", false // older results
	}
	s := r.MRMode
	if r.HugePages {
		s += ", huge pages"
	}
	return same(s)
}

func qpCount(r *result.Result) (string, string, bool) {
	if n := max(r.QPs, 1); n > 1 {
		return same(strconv.Itoa(n) + " QPs")
	}
	return same("1 QP")
}

// flags compares the settings of row's results (the TCP stand-ins
// included: they are the reference of the ratios).
func (rep *Report) flags(row *Row) []Flag {
	var out []Flag
	for _, c := range checks {
		var keys []string
		var groups []FlagGroup
		for i, cell := range row.Cells {
			r := cell.Result
			if r == nil || c.rdma && r.Transport == result.TransportTCP {
				continue
			}
			key, words, ok := c.value(r)
			if !ok {
				continue
			}
			name := rep.Fabrics[i].Label
			if cell.Send {
				name += " (send)"
			}
			if !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
			if g := slices.IndexFunc(groups, func(g FlagGroup) bool { return g.Value == words }); g >= 0 {
				groups[g].Fabrics = append(groups[g].Fabrics, name)
			} else {
				groups = append(groups, FlagGroup{Value: words, Fabrics: []string{name}})
			}
		}
		if len(keys) > 1 {
			out = append(out, Flag{Mark: c.mark, Groups: groups})
		}
	}
	return out
}

// Marks returns the marks of row's flags, space-separated, such as "R I".
func (r *Row) Marks() string {
	m := make([]string, len(r.Flags))
	for i, f := range r.Flags {
		m[i] = f.Mark
	}
	return strings.Join(m, " ")
}
