package compare

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The counter limits of the gate (compare --max-counter): how far a port
// counter may move during each test of the new run. A limit is per side:
// the client's and the server's deltas are each checked against it, never
// added up (on one device both sides count the same traffic). A limit named
// by a category of result.TroubleCounters (e.g. "retransmissions") applies
// to the sum of that side's counters of the category; any other name is a
// counter's own (sysfs file name, e.g. "rcvd_seq_err"). A counter absent from
// a side's deltas did not move: 0.

// CounterExcess is a test of the new run where a side's counter moved more
// than its limit allows.
type CounterExcess struct {
	Test   result.Key
	Side   string // "client" or "server"
	Device string
	Port   int
	Name   string           // the limit's name: a category or a counter
	Value  int64            // the delta: a category's sum
	Max    int64            // the limit
	Parts  map[string]int64 // a category's counters that moved
}

// String describes e on one line, such as "send lat 2B: server rxe0 port 1:
// retransmissions 373 > 0 (completer_retry_err 373)".
func (e CounterExcess) String() string {
	s := fmt.Sprintf("%s: %s %s port %d: %s %d > %d", e.Test, e.Side, e.Device, e.Port, e.Name, e.Value, e.Max)
	if len(e.Parts) > 0 {
		var parts []string
		for k, v := range e.Parts {
			parts = append(parts, k+" "+strconv.FormatInt(v, 10))
		}
		sort.Strings(parts)
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// counterName is what a limit may name: a sysfs counter file name, possibly
// prefixed "hw_counters/" (as in result.PortCounters.Deltas).
var counterName = regexp.MustCompile(`^(hw_counters/)?[A-Za-z0-9_.-]+$`)

// ParseMaxCounter parses counter limits such as "retransmissions=0,
// rcvd_seq_err=10" into a map from name to the largest delta allowed. A
// name is a category of result.TroubleCounters (any case) or a counter's
// file name (as sysfs spells it); a limit is a whole number ≥ 0; a name may
// appear once. The error names the bad entry and its value.
func ParseMaxCounter(s string) (map[string]int64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("max-counter is empty; want NAME=N,..., e.g. retransmissions=0")
	}
	limits := map[string]int64{}
	for _, part := range strings.Split(s, ",") {
		entry := strings.TrimSpace(part)
		k, v, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("max-counter entry %q: want NAME=N, e.g. retransmissions=0", entry)
		}
		name := strings.TrimSpace(k)
		if result.IsTroubleCategory(strings.ToLower(name)) {
			name = strings.ToLower(name)
		} else if !counterName.MatchString(name) {
			return nil, fmt.Errorf("max-counter entry %q: %q is neither a category (%s) nor a counter name",
				entry, name, strings.Join(result.TroubleCategories(), ", "))
		}
		if _, dup := limits[name]; dup {
			return nil, fmt.Errorf("max-counter entry %q: %s given twice", entry, name)
		}
		v = strings.TrimSpace(v)
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("max-counter entry %q: limit %q for %s is not a whole number >= 0", entry, v, name)
		}
		limits[name] = n
	}
	return limits, nil
}

// CheckCounters checks every RDMA test of cur, the new run, against limits
// (from ParseMaxCounter): each side's delta of each limit, as the package
// comment says. It adds a CounterExcess per side and limit exceeded, counts
// the checks in CountersChecked and notes what it could not check: a side
// without counters, a limited counter that was reset during the test.
func (g *GateReport) CheckCounters(cur *result.Document, limits map[string]int64) {
	if len(limits) == 0 {
		return
	}
	names := make([]string, 0, len(limits))
	for n := range limits {
		names = append(names, n)
	}
	sort.Strings(names)
	for i := range cur.Results {
		r := &cur.Results[i]
		if r.Transport == result.TransportTCP {
			continue // no RDMA port
		}
		key := result.KeyOf(r)
		c := r.Counters
		if c == nil {
			c = &result.CounterDeltas{}
		}
		for _, s := range []struct {
			side string
			p    *result.PortCounters
		}{{"client", c.Client}, {"server", c.Server}} {
			if s.p == nil {
				g.Notes = append(g.Notes, fmt.Sprintf("%s: no %s port counters in the new run, --max-counter not checked there", key, s.side))
				continue
			}
			for _, name := range names {
				value, parts, reset := counterValue(s.p, name)
				if len(reset) > 0 {
					g.Notes = append(g.Notes, fmt.Sprintf("%s: %s %s reset during the test, not checked", key, s.side, strings.Join(reset, ", ")))
					if parts == nil { // a counter's own limit: nothing left to check
						continue
					}
				}
				g.CountersChecked++
				if value > limits[name] {
					g.Counters = append(g.Counters, CounterExcess{Test: key, Side: s.side, Device: s.p.Device, Port: s.p.Port,
						Name: name, Value: value, Max: limits[name], Parts: parts})
				}
			}
		}
	}
}

// counterValue returns p's delta for limit name: a category's sum and the
// counters in it that moved (non-nil for a category), or a counter's own
// delta; and the counters of the limit that were reset.
func counterValue(p *result.PortCounters, name string) (int64, map[string]int64, []string) {
	in := func(counter string) bool { return counter == name }
	var parts map[string]int64
	if result.IsTroubleCategory(name) {
		in = func(counter string) bool { return result.CounterCategory(counter) == name }
		parts = map[string]int64{}
	}
	var sum int64
	for k, v := range p.Deltas {
		if in(k) {
			if sum += v; sum < 0 {
				sum = math.MaxInt64 // saturate
			}
			if parts != nil {
				parts[k] = v
			}
		}
	}
	var reset []string
	for _, k := range p.Reset {
		if in(k) {
			reset = append(reset, k)
		}
	}
	return sum, parts, reset
}
