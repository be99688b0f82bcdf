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
// sorted by field: the client's (or loopback's) Env, then the server's.
// When only one document has a server environment, that is one entry.
func EnvDiffs(base, cur *result.Document) []EnvDiff {
	out := diffFlat("", flattenEnv(base.Env), flattenEnv(cur.Env))
	switch {
	case base.ServerEnv != nil && cur.ServerEnv != nil:
		out = append(out, diffFlat("server_environment.", flattenEnv(*base.ServerEnv), flattenEnv(*cur.ServerEnv))...)
	case base.ServerEnv != nil:
		out = append(out, EnvDiff{Field: "server_environment", Base: "(recorded)", New: "(none)"})
	case cur.ServerEnv != nil:
		out = append(out, EnvDiff{Field: "server_environment", Base: "(none)", New: "(recorded)"})
	}
	return out
}

// diffFlat compares two flattened environments.
func diffFlat(prefix string, a, b map[string]string) []EnvDiff {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []EnvDiff
	for k := range keys {
		if envMeasured[k] {
			continue
		}
		av, aok := a[k]
		bv, bok := b[k]
		if aok && bok && av == bv {
			continue
		}
		if !aok {
			av = "(none)"
		}
		if !bok {
			bv = "(none)"
		}
		out = append(out, EnvDiff{Field: prefix + k, Base: av, New: bv})
	}
	slices.SortFunc(out, func(x, y EnvDiff) int { return strings.Compare(x.Field, y.Field) })
	return out
}

// flattenEnv turns e into JSON path → JSON text of each leaf value.
func flattenEnv(e result.Env) map[string]string {
	out := map[string]string{}
	b, err := json.Marshal(e)
	if err != nil {
		return out
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return out
	}
	flatten("", v, out)
	return out
}

// flatten adds the leaves of v under path to out. Lists of scalars stay
// one leaf (their order is part of the value); lists of objects are
// entered element by element.
func flatten(path string, v any, out map[string]string) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			flatten(join(k), e, out)
		}
		return
	case []any:
		objects := len(x) > 0
		for _, e := range x {
			if _, ok := e.(map[string]any); !ok {
				objects = false
			}
		}
		if objects {
			for i, e := range x {
				flatten(path+"["+elemName(e.(map[string]any), i)+"]", e, out)
			}
			return
		}
	case nil:
		return // null and absent are alike: omitempty fields are absent
	}
	b, _ := json.Marshal(v)
	out[path] = string(b)
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
