//go:build experiment

package exp

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
)

// TestCliffs is make cliffs-test (docs/cliffs.md), in a guest of 3 GiB:
//  1. the planted cliff (bench/cliffs's TestRDMAPlantedLoadCliff, from the
//     test binary $RDMABENCH_CLIFFS_TEST, default build/cliffs.test beside
//     $RDMABENCH_BIN): WRITE bw along the message size shaped to 1000
//     messages/s and 512,000 B/s, the first knee in the ladder step
//     512..1024, within the announced time (once more if not: a loaded host
//     makes rxe's rates noisy); its document planted-limit.json;
//  2. the CLI along QPs 1..256: the plan line, the progress, the table's
//     knee line, the JSON (qps.json);
//  3. the CLI against 'rdmabench server' along the tx depth, briefly: role
//     client (server.json);
//  4. the CLI along the MR count 1..1024 (READ bw of 64 B over one slot per
//     MR): the plan line, the knee line, the JSON (mrs.json);
//  5. 4 KiB random READ and WRITE bandwidth over a 1 GiB region
//     (workload/region.json: both results carry the region, the access and
//     a message rate) and how long registering took (workload/region.err);
//
// then every document's plot (NAME.svg, plot --kind cliffs). All in
// $RDMABENCH_OUT; the host checks the documents against cliffs.schema.json
// and their announced time afterwards (TestCliffsFiles in bench/cliffs).
func TestCliffs(t *testing.T) {
	requireBed(t)
	bin, out := rdmabench(t), outDir(t)
	ct := envStr("RDMABENCH_CLIFFS_TEST", filepath.Join(filepath.Dir(bin), "cliffs.test"))
	if _, err := os.Stat(ct); err != nil {
		t.Fatalf("RDMABENCH_CLIFFS_TEST: %v (go test -c -o build/cliffs.test ./bench/cliffs)", err)
	}
	env := []string{"RDMABENCH_REQUIRE_RDMA=1", "RDMABENCH_CLIFFS_OUT=" + out}
	planted := func() int {
		return run(300*time.Second, os.Stdout, os.Stderr, env, ct, "-test.run", "^TestRDMAPlantedLoadCliff$", "-test.v")
	}
	if planted() != 0 {
		t.Log("CLIFFS RETRY: the planted cliff, once more (a loaded host makes rxe's rates noisy)")
		if rc := planted(); rc != 0 {
			t.Errorf("the planted load cliff: exit %d", rc)
		}
	}

	// cli runs 'rdmabench cliffs ARGS --json NAME.json', its output to
	// NAME.txt and NAME.err, and prints them; it returns the two texts.
	cli := func(name string, args ...string) (stdout, stderr string, ok bool) {
		txt, errf := filepath.Join(out, name+".txt"), filepath.Join(out, name+".err")
		rc := run(300*time.Second, create(t, txt), create(t, errf), nil, bin,
			append(append([]string{"cliffs"}, args...), "--json", filepath.Join(out, name+".json"))...)
		stdout, stderr = readFile(txt), readFile(errf)
		fmt.Print(stderr, stdout)
		if rc != 0 {
			t.Errorf("cliffs %s exited %d", name, rc)
		}
		return stdout, stderr, rc == 0
	}
	must := func(what, text, re string) {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("%s: no line matching %q", what, re)
		}
	}
	if o, e, ok := cli("qps", "-d", "rxe0", "--axis", "qps", "--to", "256", "--runs", "3", "-D", "0.5", "--bisect", "2"); ok {
		must("along QPs: the plan line", e, `(?m)^rdmabench cliffs: write bw 64B along qps 1\.\.256`)
		must("along QPs: the progress", e, `(?m)^cliffs \[`)
		must("along QPs: the table", o, `(?m)^(knee: mpps|no knee up to 256 QPs)`)
	}

	// against a server
	const port = 18620
	slog := create(t, filepath.Join(t.TempDir(), "server.log"))
	srv, err := start(300*time.Second, slog, slog, nil, bin, "server", "--bind", "192.0.2.1", "-p", fmt.Sprint(port))
	if err != nil {
		t.Fatal(err)
	}
	if err := waitListen(port, 15*time.Second); err != nil {
		t.Errorf("rdmabench server: %v", err)
	}
	cli("server", "192.0.2.1", "-p", fmt.Sprint(port), "--axis", "tx-depth", "--points", "1,4,16", "--runs", "2", "-D", "0.2", "--bisect", "1")
	srv.stop()
	if doc := readCliffs(t, filepath.Join(out, "server.json")); doc != nil && doc.Role != "client" {
		t.Errorf("server.json: role %q, want client", doc.Role)
	}

	if o, e, ok := cli("mrs", "-d", "rxe0", "--op", "read", "--axis", "mrs", "--to", "1024", "--factor", "4", "--runs", "2", "-D", "0.3", "--bisect", "1"); ok {
		must("along MRs: the plan line", e, `(?m)^rdmabench cliffs: read bw 64B along mrs 1,4,16,64,256,1024:`)
		must("along MRs: the table", o, `(?m)^(knee: mpps|no knee up to 1024 MRs)`)
	}

	// 4 KiB random READ and WRITE over 1 GiB
	wl := filepath.Join(out, "workload")
	if err := os.MkdirAll(wl, 0o755); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	rerr := create(t, filepath.Join(wl, "region.err"))
	rc := run(300*time.Second, create(t, filepath.Join(wl, "region.txt")), rerr, nil, bin, "loopback", "-d", "rxe0",
		"--op", "read,write", "--mode", "bw", "-s", "4K", "--region", "1G", "--access", "random", "-D", "2",
		"--json", filepath.Join(wl, "region.json"))
	took := fmt.Sprintf("1 GiB region: READ and WRITE bw took %d s in all (registration included)\n", int(time.Since(t0).Seconds()))
	fmt.Fprint(rerr, took)
	fmt.Print(took, readFile(filepath.Join(wl, "region.txt")))
	if rc != 0 {
		fmt.Print(readFile(filepath.Join(wl, "region.err")))
		t.Errorf("4 KiB random over 1 GiB exited %d", rc)
	} else if doc, err := result.ReadJSONFile(filepath.Join(wl, "region.json")); err != nil {
		t.Errorf("workload/region.json: %v", err)
	} else {
		n := 0
		for _, r := range doc.Results {
			if w := r.Workload; w != nil && w.RegionBytes == 1<<30 && w.Access == "random" && r.Bandwidth.Mpps > 0 {
				n++
			}
		}
		if n != 2 {
			t.Errorf("workload/region.json: %d of %d results with the 1 GiB region, random access and a message rate; want 2", n, len(doc.Results))
		}
	}

	// the plots
	docs, _ := filepath.Glob(filepath.Join(out, "*.json"))
	for _, f := range docs {
		svg := f[:len(f)-len(".json")] + ".svg"
		if rc := run(120*time.Second, os.Stdout, os.Stderr, nil, bin, "plot", f, "--kind", "cliffs", "-o", svg); rc != 0 {
			t.Errorf("plot %s: exit %d", f, rc)
		}
	}
	if !t.Failed() {
		t.Logf("cliffs OK: %s", out)
	}
}

// readCliffs decodes a cliffs document, or fails the test (nil).
func readCliffs(t *testing.T, path string) *result.CliffsDocument {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		var doc *result.CliffsDocument
		if doc, err = result.ReadCliffs(b); err == nil {
			return doc
		}
	}
	t.Errorf("%s: %v", path, err)
	return nil
}
