package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// counterNote heads the trouble lines.
const counterNote = "port counters that signal trouble and moved during the test, per side (every counter's delta is in the JSON):"

// sharedPortNote follows the lines when a test's client and server read one port.
const sharedPortNote = "where client and server share a port, each side counts both ends' traffic"

// WriteCounterLines writes, after a note, one line per test for which a
// port counter that signals trouble (result.TroubleCounters) moved or was
// reset on either side, such as
// " send lat 2B: client rxe0 port 1: completer_retry_err 373 (retransmissions); server rxe0 port 1: duplicate_request 373 (duplicates)".
// Tests where no such counter moved are left out; with none, it writes
// nothing.
func WriteCounterLines(w io.Writer, results []result.Result) error {
	var lines []string
	shared := false
	for i := range results {
		r := &results[i]
		c := r.Counters
		if c == nil {
			continue
		}
		var sides []string
		for _, s := range []struct {
			name string
			p    *result.PortCounters
		}{{"client", c.Client}, {"server", c.Server}} {
			if t := troubleOf(s.p); t != "" {
				sides = append(sides, fmt.Sprintf("%s %s port %d: %s", s.name, s.p.Device, s.p.Port, t))
			}
		}
		if len(sides) == 0 {
			continue
		}
		lines = append(lines, " "+result.KeyOf(r).String()+": "+strings.Join(sides, "; "))
		shared = shared || (c.Client != nil && c.Server != nil && c.Client.Device == c.Server.Device && c.Client.Port == c.Server.Port)
	}
	if len(lines) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(Note(counterNote))
	for _, l := range lines {
		b.WriteString(Wrap(l, Width, "   "))
	}
	if shared {
		b.WriteString(Note(sharedPortNote))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// troubleOf lists the trouble counters of p that moved or were reset, by
// name, such as "completer_retry_err 373 (retransmissions), link_downed
// reset (link_downs)"; "" when there are none.
func troubleOf(p *result.PortCounters) string {
	if p == nil {
		return ""
	}
	type entry struct{ name, text string }
	var es []entry
	for name, v := range p.Deltas {
		if cat := result.CounterCategory(name); cat != "" && v > 0 {
			es = append(es, entry{name, name + " " + strconv.FormatInt(v, 10) + " (" + cat + ")"})
		}
	}
	for _, name := range p.Reset {
		if cat := result.CounterCategory(name); cat != "" {
			es = append(es, entry{name, name + " reset (" + cat + ")"})
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].name < es[j].name })
	var parts []string
	for _, e := range es {
		parts = append(parts, e.text)
	}
	return strings.Join(parts, ", ")
}
