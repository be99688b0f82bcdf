package result_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// JSONDirEnv names a directory whose *.json files (searched recursively)
// TestSchemaFiles validates: the documents a guest run wrote.
const JSONDirEnv = "RDMABENCH_JSON_DIR" // schemafiles_test.go (build tag experiment)

// fixtureFiles are the documents kept in the repository: the bench
// package's testdata (documents from real runs of an older rdmabench) and
// this package's testdata: full*.json and tcp.json, made with the bench
// package's types and encoder to hold every field, and guest/, written by
// rdmabench in the SoftRoCE guest. Together they hold every member.
func fixtureFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, root := range []string{"testdata", filepath.Join("..", "testdata")} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".json") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 5 {
		t.Fatalf("found only %d fixture documents: %v", len(files), files)
	}
	return files
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFixturesValidate(t *testing.T) {
	for _, path := range fixtureFiles(t) {
		t.Run(path, func(t *testing.T) {
			b := readFile(t, path)
			if err := schema.Validate(b); err != nil {
				t.Errorf("%s (MR document: %v): %v", path, result.IsMRDocument(b), err)
			}
			// this package's fixtures come from the current encoder
			if strings.HasPrefix(path, "testdata") && !result.IsMRDocument(b) && !result.IsMeshDocument(b) && !result.IsDoctorDocument(b) {
				if err := validateCurrent(t, b); err != nil {
					t.Errorf("%s: %v", path, err)
				}
			}
		})
	}
}

func TestIsMRDocument(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want bool
	}{
		{`{"schema_version": 1, "mr": {}}`, true},
		{`{"schema_version": 1, "mr": null}`, true},
		{`{"schema_version": 1, "results": []}`, false},
		{`[{"mr": {}}]`, false},
		{`{"results": [{"mr": 1}]}`, false},
		{`not json`, false},
	} {
		if got := result.IsMRDocument([]byte(c.doc)); got != c.want {
			t.Errorf("IsMRDocument(%s) = %v, want %v", c.doc, got, c.want)
		}
	}
	if !result.IsMRDocument(readFile(t, "testdata/full_mr.json")) || result.IsMRDocument(readFile(t, "testdata/full.json")) {
		t.Error("fixtures misrecognised")
	}
}

// pointerTokens splits an RFC 6901 JSON pointer.
func pointerTokens(p string) []string {
	toks := strings.Split(p, "/")[1:]
	for i, s := range toks {
		toks[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
	}
	return toks
}

// mutate decodes doc, calls f with the object holding the member at JSON
// pointer p and the member's name, and encodes the result.
func mutate(t *testing.T, doc []byte, p string, f func(parent map[string]any, key string)) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	toks := pointerTokens(p)
	cur := v
	for _, tok := range toks[:len(toks)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				t.Fatalf("%s: bad index %q", p, tok)
			}
			cur = c[i]
		default:
			t.Fatalf("%s: no object or array at %q", p, tok)
		}
	}
	parent, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("%s: parent is not an object", p)
	}
	f(parent, toks[len(toks)-1])
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// set sets (or adds) the member at p; del deletes it.
func set(t *testing.T, doc []byte, p string, val any) []byte {
	t.Helper()
	return mutate(t, doc, p, func(parent map[string]any, key string) { parent[key] = val })
}

func del(t *testing.T, doc []byte, p string) []byte {
	t.Helper()
	return mutate(t, doc, p, func(parent map[string]any, key string) {
		if _, ok := parent[key]; !ok {
			t.Fatalf("%s: nothing to delete", p)
		}
		delete(parent, key)
	})
}

// testdata/full.json's results: 0 SEND latency (open loop, RTT/2,
// intervals, event, huge pages, both sides' port counters), 1 WRITE latency
// under load over rdma_cm, 2 WRITE bandwidth on 4 QPs and 2 threads with
// per-op registration (client counters, none moved), 3 UD SEND bandwidth
// with lost messages, 4 bidirectional READ bandwidth with both sides'
// figures. testdata/tcp.json: TCP latency and bandwidth.
func TestMutationsFail(t *testing.T) {
	full := readFile(t, "testdata/full.json")
	mr := readFile(t, "testdata/full_mr.json")
	tcp := readFile(t, "testdata/tcp.json")
	r := func(i int, rest string) string { return "/results/" + strconv.Itoa(i) + rest }
	for _, c := range []struct {
		name     string
		doc      []byte
		validate func([]byte) error
		path     string // the violation's JSON pointer
		reason   string // part of its reason
	}{
		// missing required fields
		{"no schema_version", del(t, full, "/schema_version"), schema.ValidateDocument, "", `missing property 'schema_version'`},
		{"no results", del(t, full, "/results"), schema.ValidateDocument, "", `missing property 'results'`},
		{"empty results", set(t, full, "/results", []any{}), schema.ValidateDocument, "/results", `minItems`},
		{"no op", del(t, full, r(0, "/op")), schema.ValidateDocument, r(0, ""), `missing property 'op'`},
		{"no device", del(t, full, "/environment/device"), schema.ValidateDocument, "/environment", `missing property 'device'`},
		{"no governors", del(t, full, "/environment/checks/governors"), schema.ValidateDocument, "/environment/checks", `missing property 'governors'`},
		{"no p99_99", del(t, full, r(0, "/latency_ns/p99_99")), schema.ValidateDocument, r(0, "/latency_ns"), `missing property 'p99_99'`},
		{"no rtt max", del(t, full, r(0, "/rtt_ns/max")), schema.ValidateDocument, r(0, "/rtt_ns"), `missing property 'max'`},
		{"no interval p99", del(t, full, r(0, "/intervals/0/p99_ns")), schema.ValidateDocument, r(0, "/intervals/0"), `missing property 'p99_ns'`},
		{"no setup_p50_ns", del(t, full, r(1, "/connection/setup_p50_ns")), schema.ValidateDocument, r(1, "/connection"), `missing property 'setup_p50_ns'`},
		{"no load ops", del(t, full, r(1, "/load/ops")), schema.ValidateDocument, r(1, "/load"), `missing property 'ops'`},
		{"no qpn", del(t, full, r(2, "/per_qp/1/qpn")), schema.ValidateDocument, r(2, "/per_qp/1"), `missing property 'qpn'`},
		{"no mr", del(t, mr, "/mr"), schema.ValidateMRDocument, "", `missing property 'mr'`},
		{"no registration", del(t, mr, "/mr/registration"), schema.ValidateMRDocument, "/mr", `missing property 'registration'`},
		{"no mr checks", del(t, mr, "/environment/checks"), schema.ValidateMRDocument, "/environment", `missing property 'checks'`},
		{"no per_op", del(t, mr, "/mr/ops/per_op"), schema.ValidateMRDocument, "/mr/ops", `missing property 'per_op'`},
		{"client without peer", del(t, full, "/peer"), schema.ValidateDocument, "", `missing property 'peer'`},
		{"qps without per_qp", del(t, full, r(2, "/per_qp")), schema.ValidateDocument, r(2, ""), `'per_qp' required, if 'qps' exists`},
		{"bidirectional without sides", del(t, full, r(4, "/sides")), schema.ValidateDocument, r(4, ""), `'sides' required, if 'bidirectional' exists`},
		{"sides without bidirectional", del(t, full, r(4, "/bidirectional")), schema.ValidateDocument, r(4, ""), `'bidirectional' required, if 'sides' exists`},
		{"no server side", del(t, full, r(4, "/sides/server")), schema.ValidateDocument, r(4, "/sides"), `missing property 'server'`},
		{"no side bytes", del(t, full, r(4, "/sides/client/bytes")), schema.ValidateDocument, r(4, "/sides/client"), `missing property 'bytes'`},

		// wrong types
		{"size string", set(t, full, r(0, "/size_bytes"), "2"), schema.ValidateDocument, r(0, "/size_bytes"), "got string, want integer"},
		{"fractional iterations", set(t, full, r(0, "/iterations"), 1.5), schema.ValidateDocument, r(0, "/iterations"), "got number, want integer"},
		{"p50 string", set(t, full, r(0, "/latency_ns/p50"), "fast"), schema.ValidateDocument, r(0, "/latency_ns/p50"), "got string, want null or number"},
		{"min null", set(t, full, r(0, "/latency_ns/min"), nil), schema.ValidateDocument, r(0, "/latency_ns/min"), "got null, want number"},
		{"governors null", set(t, full, "/environment/checks/governors", nil), schema.ValidateDocument, "/environment/checks/governors", "got null, want array"},
		{"results null", set(t, full, "/results", nil), schema.ValidateDocument, "/results", "got null, want array"},
		{"command_line string", set(t, full, "/command_line", "rdmabench run"), schema.ValidateDocument, "/command_line", "got string, want array"},
		{"software_rdma string", set(t, full, "/environment/software_rdma", "yes"), schema.ValidateDocument, "/environment/software_rdma", "got string, want boolean"},
		{"bandwidth array", set(t, full, r(0, "/bandwidth"), []any{}), schema.ValidateDocument, r(0, "/bandwidth"), "got array, want object"},
		{"setup_p50 fractional", set(t, full, r(1, "/connection/setup_p50_ns"), 2054143.5), schema.ValidateDocument, r(1, "/connection/setup_p50_ns"), "want null or integer"},
		{"start_time not a time", set(t, full, "/start_time", "yesterday"), schema.ValidateDocument, "/start_time", "is not valid date-time"},
		{"histogram not base64", set(t, full, r(0, "/histogram"), "not base64!"), schema.ValidateDocument, r(0, "/histogram"), "does not match pattern"},
		{"negative pinned CPU", set(t, full, "/environment/engine_pinned_cpu", -2), schema.ValidateDocument, "/environment/engine_pinned_cpu", "minimum"},
		{"reg_ns string", set(t, mr, "/mr/registration/0/reg_ns", "x"), schema.ValidateMRDocument, "/mr/registration/0/reg_ns", "got string, want object"},

		// unknown fields
		{"unknown top-level field", set(t, full, "/host", "x"), schema.ValidateDocument, "", `additional properties 'host' not allowed`},
		{"unknown result field", set(t, full, r(0, "/p99_us"), 1), schema.ValidateDocument, r(0, ""), `additional properties 'p99_us' not allowed`},
		{"unknown env field", set(t, full, "/environment/numa_policy", 0), schema.ValidateDocument, "/environment", `additional properties 'numa_policy' not allowed`},
		{"unknown numa field", set(t, full, "/environment/numa/distance", 10), schema.ValidateDocument, "/environment/numa", `additional properties 'distance' not allowed`},
		{"bad numa source", set(t, full, "/environment/numa/source", "auto"), schema.ValidateDocument, "/environment/numa/source", "must be one of"},
		{"unknown checks field", set(t, full, "/environment/checks/thp", "always"), schema.ValidateDocument, "/environment/checks", `additional properties 'thp' not allowed`},
		{"unknown latency field", set(t, full, r(0, "/latency_ns/p75"), 1), schema.ValidateDocument, r(0, "/latency_ns"), `additional properties 'p75' not allowed`},
		{"unknown bandwidth field", set(t, full, r(0, "/bandwidth/kpps"), 1), schema.ValidateDocument, r(0, "/bandwidth"), `additional properties 'kpps' not allowed`},
		{"unknown cpu field", set(t, full, r(0, "/cpu/total_ns"), 1), schema.ValidateDocument, r(0, "/cpu"), `additional properties 'total_ns' not allowed`},
		{"unknown open_loop field", set(t, full, r(0, "/open_loop/jitter"), 1), schema.ValidateDocument, r(0, "/open_loop"), `additional properties 'jitter' not allowed`},
		{"unknown interval field", set(t, full, r(0, "/intervals/0/p90_ns"), 1), schema.ValidateDocument, r(0, "/intervals/0"), `additional properties 'p90_ns' not allowed`},
		{"unknown load field", set(t, full, r(1, "/load/tx_depth"), 1), schema.ValidateDocument, r(1, "/load"), `additional properties 'tx_depth' not allowed`},
		{"unknown connection field", set(t, full, r(1, "/connection/port"), 1), schema.ValidateDocument, r(1, "/connection"), `additional properties 'port' not allowed`},
		{"unknown per_qp field", set(t, full, r(2, "/per_qp/0/cpu"), 1), schema.ValidateDocument, r(2, "/per_qp/0"), `additional properties 'cpu' not allowed`},
		{"mr document as result", mr, schema.ValidateDocument, "", `additional properties 'mr' not allowed`},
		{"unknown mr field", set(t, mr, "/mr/cache", true), schema.ValidateMRDocument, "/mr", `additional properties 'cache' not allowed`},
		{"unknown odp_caps field", set(t, mr, "/mr/odp_caps/xrc", "none"), schema.ValidateMRDocument, "/mr/odp_caps", `additional properties 'xrc' not allowed`},
		{"unknown ops field", set(t, mr, "/mr/ops/ratio", 1), schema.ValidateMRDocument, "/mr/ops", `additional properties 'ratio' not allowed`},
		{"unknown skipped field", set(t, mr, "/mr/skipped/0/limit", 1), schema.ValidateMRDocument, "/mr/skipped/0", `additional properties 'limit' not allowed`},

		// bad enums and constants
		{"bad op", set(t, full, r(0, "/op"), "atomic"), schema.ValidateDocument, r(0, "/op"), `value must be one of 'send', 'write', 'read', 'fetch_add', 'cmp_swap', 'write_imm', 'send_imm'`},
		{"bad mode", set(t, full, r(0, "/mode"), "latency"), schema.ValidateDocument, r(0, "/mode"), `value must be one of 'lat', 'bw'`},
		{"bad role", set(t, full, "/role", "hacker"), schema.ValidateDocument, "/role", `value must be one of 'loopback', 'client'`},
		{"bad tool", set(t, full, "/tool", "iperf"), schema.ValidateDocument, "/tool", `value must be one of 'rdmabench', 'perftest'`},
		{"schema version 2", set(t, full, "/schema_version", 2), schema.ValidateDocument, "/schema_version", "value must be 1"},
		{"bad qp_type", set(t, full, r(0, "/qp_type"), "XRC"), schema.ValidateDocument, r(0, "/qp_type"), "value must be one of"},
		{"bad env qp_type", set(t, full, "/environment/qp_type", "RC,XRC"), schema.ValidateDocument, "/environment/qp_type", "does not match pattern"},
		{"bad schedule", set(t, full, r(0, "/open_loop/schedule"), "burst"), schema.ValidateDocument, r(0, "/open_loop/schedule"), `value must be one of 'constant', 'poisson'`},
		{"bad method", set(t, full, r(1, "/connection/method"), "ucx"), schema.ValidateDocument, r(1, "/connection/method"), `value must be one of 'rdma_cm', 'exchange'`},
		{"bad mr_mode", set(t, full, r(0, "/mr_mode"), "cache"), schema.ValidateDocument, r(0, "/mr_mode"), `value must be one of 'pool', 'per-op', 'odp'`},
		{"bad load op", set(t, full, r(1, "/load/op"), "fetch_add"), schema.ValidateDocument, r(1, "/load/op"), `value must be one of 'write', 'read', 'send'`},
		{"bad transport", set(t, tcp, r(0, "/transport"), "rdma"), schema.ValidateDocument, r(0, "/transport"), `value must be 'tcp'`},
		{"bad link layer", set(t, full, "/environment/link_layer", "Ether"), schema.ValidateDocument, "/environment/link_layer", "value must be one of"},
		{"bad gid_type", set(t, full, "/environment/gid_type", "RoCEv2"), schema.ValidateDocument, "/environment/gid_type", "does not match pattern"},
		{"bad clock", set(t, full, "/environment/clock_source", "CLOCK_REALTIME"), schema.ValidateDocument, "/environment/clock_source", `value must be one of 'CLOCK_MONOTONIC_RAW', 'tsc', 'cntvct', 'rdtsc (perftest)'`},
		{"event false", set(t, full, r(0, "/event"), false), schema.ValidateDocument, r(0, "/event"), "value must be true"},
		{"mr role", set(t, mr, "/role", "client"), schema.ValidateMRDocument, "/role", `value must be 'mr'`},
		{"bad access", set(t, mr, "/mr/access", "REMOTE_WRITE"), schema.ValidateMRDocument, "/mr/access", "value must be"},
		{"odp access without odp", set(t, mr, "/mr/odp", false), schema.ValidateMRDocument, "/mr/access", `value must be 'LOCAL_WRITE'`},
		{"bad odp ops", set(t, mr, "/mr/odp_caps/rc", "SEND|FOO"), schema.ValidateMRDocument, "/mr/odp_caps/rc", "does not match pattern"},
		{"bad mr op", set(t, mr, "/mr/ops/op", "read"), schema.ValidateMRDocument, "/mr/ops/op", `value must be 'write'`},
		{"pooled mode swapped", set(t, mr, "/mr/ops/pooled/mode", "per-op"), schema.ValidateMRDocument, "/mr/ops/pooled/mode", `value must be 'pooled'`},

		// what the code guarantees across fields
		{"atomic of 2 bytes", set(t, full, r(0, "/op"), "fetch_add"), schema.ValidateDocument, r(0, "/size_bytes"), "value must be 8"},
		{"open loop bandwidth", set(t, full, r(2, "/open_loop"), map[string]any{"schedule": "constant", "rate_target": 1, "rate_achieved": 1}),
			schema.ValidateDocument, r(2, "/open_loop"), "not allowed here"},
		{"tcp with connection", set(t, full, r(0, "/transport"), "tcp"), schema.ValidateDocument, r(0, "/connection"), "not allowed here"},
		{"bidirectional latency", set(t, full, r(4, "/mode"), "lat"), schema.ValidateDocument, r(4, "/bidirectional"), "not allowed here"},
		{"bidirectional tcp", set(t, full, r(4, "/transport"), "tcp"), schema.ValidateDocument, r(4, "/sides"), "not allowed here"},
		{"bidirectional false", set(t, full, r(4, "/bidirectional"), false), schema.ValidateDocument, r(4, "/bidirectional"), "value must be true"},
		{"tcp write", set(t, tcp, r(0, "/op"), "write"), schema.ValidateDocument, r(0, "/op"), `value must be 'send'`},
		{"loopback with peer", set(t, tcp, "/peer", "127.0.0.1:1"), schema.ValidateDocument, "/peer", "not allowed here"},
		{"exchange with address", set(t, full, r(0, "/connection/address"), "192.0.2.1:1"), schema.ValidateDocument, r(0, "/connection/address"), "not allowed here"},
		{"empty omitempty string", set(t, full, "/peer", ""), schema.ValidateDocument, "/peer", "minLength"},
		{"mr results", set(t, mr, "/results", []any{map[string]any{}}), schema.ValidateMRDocument, "/results", "maxItems"},

		// port counters
		{"zero counter delta", set(t, full, r(0, "/counters/client/deltas/sent_pkts"), 0), schema.ValidateDocument, r(0, "/counters/client/deltas/sent_pkts"), "minimum"},
		{"negative counter delta", set(t, full, r(0, "/counters/server/deltas/rcvd_pkts"), -3), schema.ValidateDocument, r(0, "/counters/server/deltas/rcvd_pkts"), "minimum"},
		{"counter delta string", set(t, full, r(0, "/counters/client/deltas/sent_pkts"), "7"), schema.ValidateDocument, r(0, "/counters/client/deltas/sent_pkts"), "got string, want integer"},
		{"bad counter name", set(t, full, r(0, "/counters/client/deltas/sent pkts"), 1), schema.ValidateDocument, r(0, "/counters/client/deltas"), `additional properties 'sent pkts' not allowed`},
		{"unknown counters field", set(t, full, r(0, "/counters/total"), map[string]any{}), schema.ValidateDocument, r(0, "/counters"), `additional properties 'total' not allowed`},
		{"unknown port counters field", set(t, full, r(0, "/counters/client/lid"), 1), schema.ValidateDocument, r(0, "/counters/client"), `additional properties 'lid' not allowed`},
		{"no deltas", del(t, full, r(0, "/counters/client/deltas")), schema.ValidateDocument, r(0, "/counters/client"), `missing property 'deltas'`},
		{"no counter device", del(t, full, r(0, "/counters/server/device")), schema.ValidateDocument, r(0, "/counters/server"), `missing property 'device'`},
		{"counters of no side", set(t, full, r(0, "/counters"), map[string]any{}), schema.ValidateDocument, r(0, "/counters"), "minProperties"},
		{"empty reset list", set(t, full, r(0, "/counters/server/reset"), []any{}), schema.ValidateDocument, r(0, "/counters/server/reset"), "minItems"},
		{"tcp with counters", set(t, full, r(0, "/transport"), "tcp"), schema.ValidateDocument, r(0, "/counters"), "not allowed here"},

		// not a document at all
		{"not JSON", []byte("{"), schema.ValidateDocument, "-", "not JSON"},
		{"array", []byte("[]"), schema.ValidateDocument, "", "got array, want object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.validate(c.doc)
			if err == nil {
				t.Fatal("valid; want an error")
			}
			if c.path == "-" {
				if !strings.Contains(err.Error(), c.reason) {
					t.Errorf("error %q lacks %q", err, c.reason)
				}
				return
			}
			var se *schema.Error
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *schema.Error", err, err)
			}
			for _, v := range se.Violations {
				if v.Path == c.path && strings.Contains(v.Reason, c.reason) {
					if !strings.Contains(err.Error(), v.String()) {
						t.Errorf("message %q does not name %q", err, v)
					}
					return
				}
			}
			t.Errorf("no violation at %q with %q in:\n%v", c.path, c.reason, err)
		})
	}
}

// Mutations that stay valid: the schema must not be stricter than the code.
func TestMutationsPass(t *testing.T) {
	full := readFile(t, "testdata/full.json")
	mr := readFile(t, "testdata/full_mr.json")
	for _, c := range []struct {
		name     string
		doc      []byte
		validate func([]byte) error
	}{
		{"percentile n/a", set(t, full, "/results/0/latency_ns/p99_99", nil), schema.ValidateDocument},
		{"interval p99 n/a", set(t, full, "/results/0/intervals/0/p99_ns", nil), schema.ValidateDocument},
		{"setup p50 n/a", set(t, full, "/results/0/connection/setup_p50_ns", nil), schema.ValidateDocument},
		{"no warnings", del(t, full, "/warnings"), schema.ValidateDocument},
		{"loopback", del(t, set(t, full, "/role", "loopback"), "/peer"), schema.ValidateDocument},
		{"older writer: no checks", del(t, full, "/environment/checks"), schema.ValidateDocument},
		{"older writer: no link_utilization", del(t, full, "/results/1/link_utilization"), schema.ValidateDocument},
		{"atomic", set(t, set(t, full, "/results/1/op", "cmp_swap"), "/results/1/size_bytes", 8), schema.ValidateDocument},
		{"fractional latency", set(t, full, "/results/0/latency_ns/min", 11492.5), schema.ValidateDocument},
		{"integral float", set(t, full, "/environment/link_gbps", 100), schema.ValidateDocument},
		{"time with offset", set(t, full, "/end_time", "2026-12-01T10:30:09.5+01:00"), schema.ValidateDocument},
		{"unknown GID type", set(t, full, "/environment/gid_type", "GIDType(7)"), schema.ValidateDocument},
		{"counters of the client only", del(t, full, "/results/0/counters/server"), schema.ValidateDocument},
		{"no counters", del(t, full, "/results/0/counters"), schema.ValidateDocument},
		{"hw_counters name", set(t, full, "/results/0/counters/client/deltas/hw_counters~1link_downed", 1), schema.ValidateDocument},
		{"no ODP", set(t, set(t, mr, "/mr/odp", false), "/mr/access", "LOCAL_WRITE"), schema.ValidateMRDocument},
		{"no ops, no skipped", del(t, del(t, mr, "/mr/ops"), "/mr/skipped"), schema.ValidateMRDocument},
		{"no time limit", set(t, mr, "/mr/time_per_size_ns", -1), schema.ValidateMRDocument},
		{"no ODP ops", set(t, mr, "/mr/odp_caps/rc", "none"), schema.ValidateMRDocument},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.validate(c.doc); err != nil {
				t.Error(err)
			}
		})
	}
}

// currentSchema adds to schema.json what rdmabench writes today but older
// versions did not (environment.checks, results[].link_utilization): the
// documents of a fresh run must have them.
const currentSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://github.com/rdmabench/rdmabench/bench/result/current.schema.json",
  "$ref": "schema.json",
  "properties": {
    "environment": {"required": ["checks"]},
    "results": {"items": {"required": ["link_utilization"]}}
  }
}`

func validateCurrent(t *testing.T, data []byte) error {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for url, b := range map[string][]byte{schema.DocumentURL: result.SchemaJSON, schema.DoctorURL: result.DoctorSchemaJSON, strings.Replace(schema.DocumentURL, "schema.json", "current.schema.json", 1): []byte(currentSchema)} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
	}
	sch, err := c.Compile(strings.Replace(schema.DocumentURL, "schema.json", "current.schema.json", 1))
	if err != nil {
		t.Fatal(err)
	}
	return schema.Against(sch, data)
}

func TestCurrentSchema(t *testing.T) {
	full := readFile(t, "testdata/full.json")
	if err := validateCurrent(t, full); err != nil {
		t.Fatal(err)
	}
	if err := validateCurrent(t, readFile(t, "testdata/tcp.json")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"/environment/checks":          `/environment: missing property 'checks'`,
		"/results/2/link_utilization":  `/results/2: missing property 'link_utilization'`,
		"/results/0/latency_ns/p99_99": `/results/0/latency_ns: missing property 'p99_99'`,
	} {
		err := validateCurrent(t, del(t, full, p))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("without %s: %v; want %s", p, err, want)
		}
	}
}

// schemaDoc is a decoded schema file with its name for cross-file $refs.
type schemaDoc struct {
	name string
	root map[string]any
}

func loadSchemas(t *testing.T) map[string]schemaDoc {
	t.Helper()
	out := map[string]schemaDoc{}
	for name, b := range map[string][]byte{"schema.json": result.SchemaJSON, "mr.schema.json": result.MRSchemaJSON, "mesh.schema.json": result.MeshSchemaJSON, "doctor.schema.json": result.DoctorSchemaJSON} {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		out[name] = schemaDoc{name, m}
	}
	return out
}

// subschema is one schema node and the file it is in.
type subschema struct {
	file string
	node map[string]any
}

// expand returns n followed by every subschema that n's $ref and allOf
// pull in, recursively (if/then conditions are left out).
func expand(t *testing.T, docs map[string]schemaDoc, n subschema) []subschema {
	t.Helper()
	out := []subschema{n}
	if ref, ok := n.node["$ref"].(string); ok {
		file, frag, _ := strings.Cut(ref, "#")
		if file == "" {
			file = n.file
		}
		d, ok := docs[file]
		if !ok {
			t.Fatalf("$ref %q: no schema %s", ref, file)
		}
		target := d.root
		for _, tok := range pointerTokens(frag) {
			next, ok := target[tok].(map[string]any)
			if !ok {
				t.Fatalf("$ref %q does not resolve", ref)
			}
			target = next
		}
		out = append(out, expand(t, docs, subschema{file, target})...)
	}
	if all, ok := n.node["allOf"].([]any); ok {
		for _, a := range all {
			if m, ok := a.(map[string]any); ok && m["if"] == nil {
				out = append(out, expand(t, docs, subschema{n.file, m})...)
			}
		}
	}
	return out
}

// schemaPaths lists every member path the schema declares, such as
// "results[].connection.setup_ns", with the $defs name of each object.
func schemaPaths(t *testing.T, docs map[string]schemaDoc, n subschema, prefix string, out map[string]bool) {
	t.Helper()
	for _, s := range expand(t, docs, n) {
		if props, ok := s.node["properties"].(map[string]any); ok {
			for name, p := range props {
				pm, ok := p.(map[string]any)
				if !ok { // false: never present
					continue
				}
				path := strings.TrimPrefix(prefix+"."+name, ".")
				out[path] = true
				schemaPaths(t, docs, subschema{s.file, pm}, path, out)
			}
		}
		if pp, ok := s.node["patternProperties"].(map[string]any); ok { // a map: any member name
			out[prefix+".*"] = true
			for _, p := range pp {
				schemaPaths(t, docs, subschema{s.file, p.(map[string]any)}, prefix+".*", out)
			}
		}
		if items, ok := s.node["items"].(map[string]any); ok && s.node["maxItems"] != 0.0 {
			schemaPaths(t, docs, subschema{s.file, items}, prefix+"[]", out)
		}
	}
}

// docPaths lists every member path in a decoded document.
func docPaths(v any, prefix string, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			path := strings.TrimPrefix(prefix+"."+k, ".")
			out[path] = true
			docPaths(e, path, out)
		}
	case []any:
		for _, e := range v {
			docPaths(e, prefix+"[]", out)
		}
	}
}

// TestFixturesCoverSchema checks that the fixture documents together hold
// every member each schema declares, so that every optional object and
// field (rtt_ns, intervals, load, open_loop, per_qp, connection, cpu,
// transport, mr.ops, mr.skipped, ...) is validated against real encoder
// output.
func TestFixturesCoverSchema(t *testing.T) {
	docs := loadSchemas(t)
	seen := map[string]map[string]bool{"schema.json": {}, "mr.schema.json": {}, "mesh.schema.json": {}, "doctor.schema.json": {}}
	for _, path := range fixtureFiles(t) {
		var v any
		b := readFile(t, path)
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		kind := "schema.json"
		if result.IsMRDocument(b) {
			kind = "mr.schema.json"
		}
		if result.IsMeshDocument(b) {
			kind = "mesh.schema.json"
		}
		if result.IsDoctorDocument(b) {
			kind = "doctor.schema.json"
		}
		docPaths(v, "", seen[kind])
	}
	for kind, doc := range seen {
		want := map[string]bool{}
		schemaPaths(t, docs, subschema{kind, docs[kind].root}, "", want)
		got := map[string]bool{} // member names of maps (patternProperties) as "*"
		for p := range doc {
			got[wildcardPath(p, want)] = true
		}
		var missing, extra []string
		for p := range want {
			// mr.schema.json takes environment from schema.json: the
			// result documents cover it.
			shared := kind == "mr.schema.json" && (strings.HasPrefix(p, "environment.") || strings.HasPrefix(p, "server_environment")) &&
				(seen["schema.json"][p] || seen["schema.json"][strings.Replace(p, "server_environment", "environment", 1)] || p == "server_environment")
			// mesh.schema.json takes Env and Result from schema.json too.
			if kind == "mesh.schema.json" && meshShared(p) {
				shared = true
			}
			if !got[p] && !shared {
				missing = append(missing, p)
			}
		}
		for p := range got {
			if !want[p] && !(kind == "mesh.schema.json" && meshShared(p)) {
				extra = append(extra, p)
			}
		}
		sort.Strings(missing)
		sort.Strings(extra)
		if len(missing) > 0 {
			t.Errorf("%s: no fixture document has %s", kind, strings.Join(missing, ", "))
		}
		if len(extra) > 0 {
			t.Errorf("%s: fixtures have members the schema lacks: %s", kind, strings.Join(extra, ", "))
		}
		if len(want) < 20 {
			t.Errorf("%s: only %d paths found in the schema", kind, len(want))
		}
	}
}

// wildcardPath replaces each member name of p that is a map key in the
// schema (want has the path up to it followed by ".*") with "*", e.g.
// "results[].counters.client.deltas.sent_pkts" becomes
// "results[].counters.client.deltas.*".
func wildcardPath(p string, want map[string]bool) string {
	var out string
	for _, seg := range strings.Split(p, ".") {
		name, arr := seg, ""
		if i := strings.Index(seg, "["); i > 0 {
			name, arr = seg[:i], seg[i:]
		}
		if want[strings.TrimPrefix(out+".*", ".")] {
			name = "*"
		}
		out = strings.TrimPrefix(out+"."+name+arr, ".")
	}
	return out
}

// TestSchemaObjectsClosed checks that every object schema (one with
// "type": "object") in both files sets additionalProperties false, so a
// field added to the Go structs but not to the schema fails validation.
func TestSchemaObjectsClosed(t *testing.T) {
	n := 0
	for name, d := range loadSchemas(t) {
		var walk func(v any, at string)
		walk = func(v any, at string) {
			switch v := v.(type) {
			case map[string]any:
				if v["type"] == "object" {
					n++
					if ap, ok := v["additionalProperties"].(bool); !ok || ap {
						t.Errorf("%s#%s: object without additionalProperties false", name, at)
					}
				}
				for k, e := range v {
					walk(e, at+"/"+k)
				}
			case []any:
				for _, e := range v {
					walk(e, at+"/[]")
				}
			}
		}
		walk(d.root, "")
	}
	if n < 19 { // 12 in schema.json, 7 in mr.schema.json
		t.Errorf("only %d object schemas", n)
	}
}

func TestErrorMessage(t *testing.T) {
	full := readFile(t, "testdata/full.json")
	err := schema.ValidateDocument(del(t, set(t, full, "/results/0/op", "atomic"), "/results/1/mode"))
	var se *schema.Error
	if !errors.As(err, &se) {
		t.Fatalf("%T %v", err, err)
	}
	want := []schema.Violation{
		{Path: "/results/0/op", Reason: `value must be one of 'send', 'write', 'read', 'fetch_add', 'cmp_swap', 'write_imm', 'send_imm'`},
		{Path: "/results/1", Reason: `missing property 'mode'`},
	}
	if !slices.Equal(se.Violations, want) {
		t.Errorf("violations %q, want %q", se.Violations, want)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "2 schema violations:\n") || !strings.Contains(msg, "\n  /results/1: missing property 'mode'") {
		t.Errorf("message:\n%s", msg)
	}
	one := schema.ValidateDocument(del(t, full, "/tool")).Error()
	if one != `schema violation at (document): missing property 'tool'` {
		t.Errorf("message %q", one)
	}
}

// meshShared reports whether p, a member path of a mesh document, lies in
// an object mesh.schema.json takes from schema.json (Env, Result), which
// the result documents cover.
func meshShared(p string) bool {
	for _, pre := range []string{"pairs[].results[]", "pairs[].environment.", "pairs[].server_environment.", "ranks[].environment."} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}
