package compare

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func TestEnvDiffs(t *testing.T) {
	env := result.Env{Host: "a", Kernel: "6.1.0-18-amd64", Device: "rxe0", Driver: "rdma_rxe", Firmware: "1.0", ActiveMTU: 4096,
		KernelClocksource: "tsc", ClockReadCostNS: 30, Checks: result.EnvChecks{Governors: []string{"performance"}, DeviceNUMANode: -1}}
	doc := func(f func(e *result.Env, d *result.Document)) *result.Document {
		d := &result.Document{Env: env}
		if f != nil {
			f(&d.Env, d)
		}
		return d
	}
	srv := env
	for _, c := range []struct {
		name string
		cur  *result.Document
		want []string
	}{
		{"same", doc(nil), nil},
		{"measured each run", doc(func(e *result.Env, _ *result.Document) { e.ClockReadCostNS = 202 }), nil},
		{"kernel", doc(func(e *result.Env, _ *result.Document) { e.Kernel = "6.1.0-20-amd64" }), []string{`kernel: "6.1.0-18-amd64" -> "6.1.0-20-amd64"`}},
		{"device, firmware and MTU", doc(func(e *result.Env, _ *result.Document) {
			e.Device, e.Firmware, e.ActiveMTU = "mlx5_0", "22.31.1014", 1024
		}),
			[]string{"active_mtu: 4096 -> 1024", `device: "rxe0" -> "mlx5_0"`, `firmware: "1.0" -> "22.31.1014"`}},
		{"clocksource", doc(func(e *result.Env, _ *result.Document) { e.KernelClocksource = "hpet" }), []string{`kernel_clocksource: "tsc" -> "hpet"`}},
		{"nested list", doc(func(e *result.Env, _ *result.Document) { e.Checks.Governors = []string{"powersave"} }),
			[]string{`checks.governors: ["performance"] -> ["powersave"]`}},
		{"a field only one has", doc(func(e *result.Env, _ *result.Document) { e.NUMA = &result.NUMAPlacement{Node: 1, Source: "device"} }),
			[]string{"numa: (none) -> (recorded)"}},
		{"a field inside a group", doc(func(e *result.Env, _ *result.Document) { e.Checks.DeviceNUMANode = 1 }), []string{"checks.device_numa_node: -1 -> 1"}},
		{"server recorded in one", doc(func(_ *result.Env, d *result.Document) { d.ServerEnv = &srv }), []string{"server_environment: (none) -> (recorded)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, d := range EnvDiffs(doc(nil), c.cur) {
				got = append(got, d.String())
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
	srv2 := env
	srv2.Firmware, srv2.ClockReadCostNS = "2.0", 700
	a, b := doc(func(_ *result.Env, d *result.Document) { d.ServerEnv = &srv }), doc(func(_ *result.Env, d *result.Document) { d.ServerEnv = &srv2 })
	if got := EnvDiffs(a, b); len(got) != 1 || got[0].String() != `server_environment.firmware: "1.0" -> "2.0"` {
		t.Errorf("server firmware: %v", got)
	}
}

// TestEnvDiffsEveryField: every field of result.Env, present and future,
// is compared under its JSON name, except those measured anew each run.
func TestEnvDiffsEveryField(t *testing.T) {
	typ := reflect.TypeOf(result.Env{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		var a, b result.Env
		if !differ(reflect.ValueOf(&b).Elem().Field(i)) {
			t.Errorf("Env.%s: kind %s: the test cannot make it differ; extend differ", f.Name, f.Type)
			continue
		}
		diffs := EnvDiffs(&result.Document{Env: a}, &result.Document{Env: b})
		if envMeasured[name] {
			if len(diffs) != 0 {
				t.Errorf("Env.%s is measured each run, but differs: %v", f.Name, diffs)
			}
			continue
		}
		if len(diffs) == 0 || !strings.HasPrefix(diffs[0].Field, name) {
			t.Errorf("Env.%s (%s): diffs %v", f.Name, name, diffs)
		}
	}
}

// differ sets v to a value other than its zero value, as JSON shows it.
func differ(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(7.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		return differ(v.Index(0))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		return differ(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && differ(v.Field(i)) {
				return true
			}
		}
		return false
	case reflect.Map:
		return false
	default:
		return false
	}
	b, _ := json.Marshal(v.Interface())
	return string(b) != string(must(json.Marshal(reflect.Zero(v.Type()).Interface())))
}

func must(b []byte, _ error) []byte { return b }

// TestDiffJSONObjectLists: lists of objects (as doctor findings would be)
// are matched by their name, not their position.
func TestDiffJSONObjectLists(t *testing.T) {
	parse := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	a := parse(`{"doctor":[{"check":"mtu","status":"PASS"},{"check":"pfc","status":"unknown"}]}`)
	b := parse(`{"doctor":[{"check":"pfc","status":"unknown"},{"check":"mtu","status":"WARN"},{"check":"governor","status":"PASS"}]}`)
	var out []EnvDiff
	diffJSON("", a, b, &out)
	var got []string
	for _, d := range out {
		got = append(got, d.String())
	}
	slices.Sort(got)
	want := []string{`doctor[governor]: (none) -> (recorded)`, `doctor[mtu].status: "PASS" -> "WARN"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
