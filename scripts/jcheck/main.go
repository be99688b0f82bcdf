// Command jcheck checks JSON documents for the guest scripts
// (scripts/pair-test-guest.sh), decoding them instead of grepping their text:
//
//	jcheck FILE CHECK... [FILE CHECK...]
//
// An argument ending in ".json" names the file the checks after it read.
// A CHECK is PATH [OP VALUE], or count(PATH [OP VALUE]) OP N:
//
//   - PATH is dot-separated: a key, [N] an array index, [KEY=VALUE] the
//     elements that are objects whose KEY holds VALUE (a string or number,
//     as written: "findings[check=mtu].status"), * any key or index, ** any
//     depth (zero or more levels); "**.transport" is every "transport"
//     anywhere.
//   - OP is ==, !=, <, <=, >, >= (numbers; == and != also strings, true,
//     false, null) or ~ (a string value contains VALUE).
//   - VALUE is a JSON literal: 3, 0.5, "text", true, false, null.
//
// PATH alone holds when some value there is not null; PATH OP VALUE when
// some value there satisfies it; count(...) OP N when the number of values
// that do compares so with N. Exit 0 when every check holds; 1, naming
// each check that does not and what is there, otherwise; 2 for bad usage or
// a file that does not decode. Pure Go.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 || !strings.HasSuffix(args[0], ".json") {
		fmt.Fprintln(stderr, "usage: jcheck FILE.json CHECK... [FILE.json CHECK...]")
		return 2
	}
	var doc any
	file, failed := "", 0
	for _, a := range args {
		if strings.HasSuffix(a, ".json") && !strings.ContainsAny(a, " =<>~(") {
			var err error
			if doc, err = load(a); err != nil {
				fmt.Fprintf(stderr, "jcheck: %v\n", err)
				return 2
			}
			file = a
			continue
		}
		c, err := parseCheck(a)
		if err != nil {
			fmt.Fprintf(stderr, "jcheck: %q: %v\n", a, err)
			return 2
		}
		if ok, found := c.eval(doc); !ok {
			failed++
			fmt.Fprintf(stdout, "jcheck: %s: %s does not hold; at %s: %s\n", file, a, c.path, found)
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}

func load(path string) (any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// check is one parsed CHECK.
type check struct {
	path  string
	segs  []string
	op    string // "" : not null
	value any    // json.Number, string, bool or nil
	count bool
	cop   string
	n     int
}

var (
	countRE = regexp.MustCompile(`^count\((.*)\)\s*(==|!=|<=|>=|<|>)\s*([0-9]+)$`)
	opRE    = regexp.MustCompile(`^(\S+)\s*(==|!=|<=|>=|<|>|~)\s*(.+)$`)
)

func parseCheck(s string) (*check, error) {
	c := &check{}
	s = strings.TrimSpace(s)
	if m := countRE.FindStringSubmatch(s); m != nil {
		c.count, c.cop = true, m[2]
		c.n, _ = strconv.Atoi(m[3])
		s = strings.TrimSpace(m[1])
	}
	if m := opRE.FindStringSubmatch(s); m != nil {
		c.path, c.op = m[1], m[2]
		d := json.NewDecoder(strings.NewReader(m[3]))
		d.UseNumber()
		if err := d.Decode(&c.value); err != nil {
			return nil, fmt.Errorf("value %s: not a JSON literal", m[3])
		}
		if _, isNum := c.value.(json.Number); !isNum && c.op != "==" && c.op != "!=" && c.op != "~" {
			return nil, fmt.Errorf("%s needs a number", c.op)
		}
		if _, isStr := c.value.(string); c.op == "~" && !isStr {
			return nil, errors.New("~ needs a string")
		}
	} else {
		c.path = s
	}
	if c.path == "" || strings.ContainsAny(c.path, " \"") {
		return nil, errors.New("no path")
	}
	for _, seg := range strings.Split(c.path, ".") {
		for seg != "" { // "results[0]" is "results", "[0]"
			i := strings.IndexByte(seg[1:], '[')
			if i < 0 {
				c.segs = append(c.segs, seg)
				break
			}
			c.segs, seg = append(c.segs, seg[:i+1]), seg[i+1:]
		}
	}
	return c, nil
}

// walk returns the values at segs under v.
func walk(v any, segs []string) []any {
	if len(segs) == 0 {
		return []any{v}
	}
	seg, rest := segs[0], segs[1:]
	var out []any
	children := func(v any) []any {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			cs := make([]any, len(keys))
			for i, k := range keys {
				cs[i] = x[k]
			}
			return cs
		case []any:
			return x
		}
		return nil
	}
	switch {
	case seg == "**":
		out = append(out, walk(v, rest)...)
		for _, c := range children(v) {
			out = append(out, walk(c, segs)...)
		}
	case seg == "*":
		for _, c := range children(v) {
			out = append(out, walk(c, rest)...)
		}
	case strings.HasPrefix(seg, "[") && strings.HasSuffix(seg, "]") && strings.Contains(seg, "="):
		// [key=value]: the elements (or members) that are objects whose
		// key holds value, a string or a number as written
		k, want, _ := strings.Cut(seg[1:len(seg)-1], "=")
		for _, c := range children(v) {
			if m, ok := c.(map[string]any); ok && m[k] != nil && fmt.Sprint(m[k]) == want {
				out = append(out, walk(c, rest)...)
			}
		}
	case strings.HasPrefix(seg, "[") && strings.HasSuffix(seg, "]"):
		i, err := strconv.Atoi(seg[1 : len(seg)-1])
		if a, ok := v.([]any); ok && err == nil && i >= 0 && i < len(a) {
			out = append(out, walk(a[i], rest)...)
		}
	default:
		if m, ok := v.(map[string]any); ok {
			if c, ok := m[seg]; ok {
				out = append(out, walk(c, rest)...)
			}
		}
	}
	return out
}

// holds reports whether v satisfies the check's comparison.
func (c *check) holds(v any) bool {
	switch c.op {
	case "":
		return v != nil
	case "~":
		s, ok := v.(string)
		return ok && strings.Contains(s, c.value.(string))
	}
	if want, ok := c.value.(json.Number); ok {
		got, ok := v.(json.Number)
		if !ok {
			return false
		}
		g, err1 := got.Float64()
		w, err2 := want.Float64()
		return err1 == nil && err2 == nil && compare(g, c.op, w)
	}
	eq := v == c.value
	return (c.op == "==") == eq
}

func compare(a float64, op string, b float64) bool {
	switch op {
	case "==":
		return a == b
	case "!=":
		return a != b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	}
	return a >= b
}

// eval returns whether the check holds in doc, and what was found at its
// path (for the message).
func (c *check) eval(doc any) (bool, string) {
	vals := walk(doc, c.segs)
	n := 0
	for _, v := range vals {
		if c.holds(v) {
			n++
		}
	}
	found := describe(vals)
	if c.count {
		return compare(float64(n), c.cop, float64(c.n)), fmt.Sprintf("%d match (%s)", n, found)
	}
	return n > 0, found
}

func describe(vals []any) string {
	if len(vals) == 0 {
		return "nothing"
	}
	var parts []string
	for i, v := range vals {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("... (%d values)", len(vals)))
			break
		}
		b, _ := json.Marshal(v)
		if len(b) > 60 {
			b = append(b[:57], "..."...)
		}
		parts = append(parts, string(b))
	}
	return strings.Join(parts, ", ")
}
