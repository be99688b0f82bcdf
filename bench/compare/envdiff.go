package compare

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Environment differences: a regression, or its absence, means little when
// the baseline ran on another kernel, device, firmware or clocksource. The
// gate names every field of result.Env (and of the server's environment)
// that differs, by its JSON name, so fields added to Env later are covered
// without a change here.

// EnvDiff is one environment field that differs between two documents.
type EnvDiff struct {
	// Field is the JSON path of the field: "kernel", "checks.governors",
	// "server_environment.firmware"; list elements are [i], or [NAME] when
	// the elements are objects with a "name", "id" or "check" field.
	Field string
	Base  string // the baseline's value as JSON text; "(none)" when absent
	New   string // the new run's value, likewise
}

func (d EnvDiff) String() string { return fmt.Sprintf("%s: %s -> %s", d.Field, d.Base, d.New) }

// envMeasured are fields measured anew by every run, which differ between
// any two runs of one setup and say nothing about the setup.
var envMeasured = map[string]bool{
	"clock_read_cost_ns": true,
}

// EnvDiffs lists the environment fields that differ between base and cur,
// sorted by field: the client's (or loopback's) Env, then the server's. A
// group of fields (an object, a list of objects) that only one side has is
// one entry, "(none)" against "(recorded)". A field that either document
// does not know (result.Document.EnvKnown) is left out.
func EnvDiffs(base, cur *result.Document) []EnvDiff {
	var out []EnvDiff
	be, ce := envJSON(&base.Env), envJSON(&cur.Env)
	// a field a document does not know (an imported perftest document
	// knows only what perftest printed) is no difference
	for _, m := range []any{be, ce} {
		if m, ok := m.(map[string]any); ok {
			for k := range m {
				if !base.EnvKnown(k) || !cur.EnvKnown(k) {
					delete(m, k)
				}
			}
		}
	}
	diffJSON("", be, ce, &out)
	var bs, cs any
	if base.ServerEnv != nil {
		bs = envJSON(base.ServerEnv)
	}
	if cur.ServerEnv != nil {
		cs = envJSON(cur.ServerEnv)
	}
	diffJSON("server_environment", bs, cs, &out)
	slices.SortStableFunc(out, func(x, y EnvDiff) int {
		// the client's fields first, then the server's
		xs, ys := strings.HasPrefix(x.Field, "server_environment"), strings.HasPrefix(y.Field, "server_environment")
		if xs != ys {
			if xs {
				return 1
			}
			return -1
		}
		return strings.Compare(x.Field, y.Field)
	})
	return out
}

// envJSON is e as parsed JSON: the field names and values a reader of the
// documents sees.
func envJSON(e *result.Env) any {
	b, err := json.Marshal(e)
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	return v
}

// diffJSON adds the differences of parsed JSON values a and b under path
// to out; nil is absent (as null, which omitempty fields become).
func diffJSON(path string, a, b any, out *[]EnvDiff) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	if envMeasured[strings.TrimPrefix(path, "server_environment.")] {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		for k, av := range am {
			diffJSON(join(k), av, bm[k], out)
		}
		for k, bv := range bm {
			if _, seen := am[k]; !seen {
				diffJSON(join(k), nil, bv, out)
			}
		}
		return
	}
	if al, bl, ok := objectLists(a, b); ok {
		am, bm := map[string]any{}, map[string]any{}
		for i, e := range al {
			am[elemName(e, i)] = e
		}
		for i, e := range bl {
			bm[elemName(e, i)] = e
		}
		for k, av := range am {
			diffJSON(path+"["+k+"]", av, bm[k], out)
		}
		for k, bv := range bm {
			if _, seen := am[k]; !seen {
				diffJSON(path+"["+k+"]", nil, bv, out)
			}
		}
		return
	}
	at, bt := envText(a), envText(b)
	if at != bt {
		*out = append(*out, EnvDiff{Field: path, Base: at, New: bt})
	}
}

// objectLists returns a and b as lists of objects when both are (an absent
// list counts as empty, beside a list of objects).
func objectLists(a, b any) (al, bl []map[string]any, ok bool) {
	conv := func(v any) ([]map[string]any, bool) {
		if v == nil {
			return nil, true
		}
		l, ok := v.([]any)
		if !ok || len(l) == 0 {
			return nil, ok
		}
		var out []map[string]any
		for _, e := range l {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			out = append(out, m)
		}
		return out, true
	}
	al, aok := conv(a)
	bl, bok := conv(b)
	return al, bl, aok && bok && (al != nil || bl != nil)
}

// envText is v as JSON text; "(none)" when absent, "(recorded)" for an
// object or a list of objects.
func envText(v any) string {
	switch x := v.(type) {
	case nil:
		return "(none)"
	case map[string]any:
		return "(recorded)"
	case []any:
		if len(x) > 0 {
			if _, ok := x[0].(map[string]any); ok {
				return "(recorded)"
			}
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// elemName names a list element by its "name", "id" or "check" field, or
// by its index.
func elemName(m map[string]any, i int) string {
	for _, k := range []string{"name", "id", "check"} {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return strconv.Itoa(i)
}
