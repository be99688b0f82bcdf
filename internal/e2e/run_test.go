package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/result/schema"
	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func init() { vmtest.Layout(vmtest.One) }

// Deadlines. The bed may run under TCG (no KVM) on a loaded host: a loopback
// of a few hundred iterations takes seconds there, not milliseconds.
const (
	cmdTimeout    = 3 * time.Minute  // one command run to its end
	listenTimeout = 30 * time.Second // a server's control port to listen
	stopTimeout   = 30 * time.Second // a signalled process to exit
)

// needBed skips the test outside the one-guest bed, or fails it when
// RDMABENCH_REQUIRE_RDMA=1 (testutil's rule): the tests name the bed's
// devices (rxe0, rxe1, siw1) and addresses.
func needBed(t *testing.T) {
	t.Helper()
	if vmtest.InGuest() {
		return
	}
	testutil.RequireRDMA(t) // no RDMA device: skip, or fail under RDMABENCH_REQUIRE_RDMA=1
	if testutil.Required() {
		t.Fatalf("%s=1 but %s is unset: this is not the one-guest bed these tests need (rxe0 on lo, rxe1 on 192.0.2.1, siw1 on 203.0.113.1); run go test -exec build/vmexec ./internal/e2e",
			testutil.RequireEnv, vmtest.GuestEnv)
	}
	t.Skipf("not in the one-guest bed (%s unset): these tests need its devices; run go test -exec build/vmexec ./internal/e2e", vmtest.GuestEnv)
}

// bin is the rdmabench under test, after needBed.
func bin(t *testing.T) string {
	t.Helper()
	needBed(t)
	return vmtest.Binary(t)
}

// out is a finished command: what it printed, how it ended.
type out struct {
	Cmd            string
	Stdout, Stderr string
	Code           int // the exit status; -1 when a signal ended it
	Took           time.Duration
}

// Combined is stdout then stderr.
func (o out) Combined() string { return o.Stdout + o.Stderr }

// tail is the last n bytes of s, marked when cut.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "[...]" + s[len(s)-n:]
}

func (o out) String() string {
	return fmt.Sprintf("%s: exit %d after %v\n--- stdout:\n%s\n--- stderr:\n%s", o.Cmd, o.Code, o.Took.Round(time.Millisecond),
		tail(o.Stdout, 6000), tail(o.Stderr, 6000))
}

// quote is a command line as a shell would take it.
func quote(name string, args []string) string {
	q := []string{filepath.Base(name)}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$*?;&|<>()") {
			a = strconv.Quote(a)
		}
		q = append(q, a)
	}
	return strings.Join(q, " ")
}

// command prepares name in its own process group, with env added to this
// process's environment; the group is killed when ctx ends.
func command(ctx context.Context, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second // output pipes held by a left-behind child
	return cmd
}

// runEnv runs name to its end within timeout (else the test fails), with env
// added; whatever it left running in its process group is killed.
func runEnv(t *testing.T, timeout time.Duration, env []string, name string, args ...string) out {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := command(ctx, env, name, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	t0 := time.Now()
	err := cmd.Run()
	o := out{Cmd: strings.TrimSpace(strings.Join(env, " ") + " " + quote(name, args)), Stdout: so.String(), Stderr: se.String(), Took: time.Since(t0)}
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left behind
	}
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after %v (killed)\n%s", o.Cmd, timeout, o)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		o.Code = ee.ExitCode()
	default:
		t.Fatalf("%s: %v\n%s", o.Cmd, err, o)
	}
	t.Logf("%s: exit %d in %v", o.Cmd, o.Code, o.Took.Round(time.Millisecond))
	return o
}

// rb runs the rdmabench under test.
func rb(t *testing.T, args ...string) out {
	t.Helper()
	return runEnv(t, cmdTimeout, nil, bin(t), args...)
}

// mustRB runs the rdmabench under test, which must exit 0.
func mustRB(t *testing.T, args ...string) out {
	t.Helper()
	o := rb(t, args...)
	if o.Code != 0 {
		t.Fatalf("want exit 0: %s", o)
	}
	return o
}

// wantExit fails the test unless o exited code and its output (stdout and
// stderr) holds every one of msgs.
func wantExit(t *testing.T, o out, code int, msgs ...string) {
	t.Helper()
	if o.Code != code {
		t.Errorf("exit %d, want %d: %s", o.Code, code, o)
		return
	}
	for _, m := range msgs {
		if !strings.Contains(o.Combined(), m) {
			t.Errorf("the output lacks %q: %s", m, o)
		}
	}
}

// wantOutput fails the test unless s holds every one of msgs.
func wantOutput(t *testing.T, what, s string, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		if !strings.Contains(s, m) {
			t.Errorf("%s lacks %q:\n%s", what, m, tail(s, 8000))
		}
	}
}

// lineWriter keeps what is written and hands each complete line to fn.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	part []byte
	fn   func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	var lines []string
	if w.fn != nil {
		w.part = append(w.part, p...)
		for {
			i := bytes.IndexByte(w.part, '\n')
			if i < 0 {
				break
			}
			lines = append(lines, string(w.part[:i]))
			w.part = w.part[i+1:]
		}
	}
	w.mu.Unlock()
	for _, l := range lines {
		w.fn(l)
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// proc is a command running in the background (a server).
type proc struct {
	cmd    string
	c      *exec.Cmd
	stdout *lineWriter
	stderr *lineWriter
	done   chan struct{}
	code   int
	err    error
}

// startEnv starts name in the background with env added; onStderr (if not
// nil) gets each line of its stderr as it comes. It is killed (its process
// group) when the test ends, or after timeout.
func startEnv(t *testing.T, timeout time.Duration, env []string, onStderr func(string), name string, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	c := command(ctx, env, name, args...)
	p := &proc{cmd: strings.TrimSpace(strings.Join(env, " ") + " " + quote(name, args)), c: c,
		stdout: &lineWriter{}, stderr: &lineWriter{fn: onStderr}, done: make(chan struct{})}
	c.Stdout, c.Stderr = p.stdout, p.stderr
	if err := c.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", p.cmd, err)
	}
	go func() {
		err := c.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code, p.err = -1, err
		}
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		cancel()
		close(p.done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(stopTimeout):
			t.Errorf("%s: still running %v after SIGKILL", p.cmd, stopTimeout)
		}
	})
	return p
}

// start starts the rdmabench under test in the background.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	return startEnv(t, cmdTimeout, nil, nil, bin(t), args...)
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) String() string {
	state := "running"
	if p.exited() {
		state = fmt.Sprintf("exit %d", p.code)
		if p.err != nil {
			state += fmt.Sprintf(" (%v)", p.err)
		}
	}
	return fmt.Sprintf("%s: %s\n--- stdout:\n%s\n--- stderr:\n%s", p.cmd, state, tail(p.stdout.String(), 6000), tail(p.stderr.String(), 6000))
}

// wait waits at most d for p to exit and returns its exit status (-1: a
// signal); the test fails if it does not exit in time.
func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		t.Fatalf("still running after %v: %s", d, p)
		return 0
	}
}

// stop sends sig to p (the process, as sh's kill does) and waits for it to exit.
func (p *proc) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if !p.exited() {
		if err := p.c.Process.Signal(sig); err != nil && !p.exited() {
			t.Errorf("signal %v to %s: %v", sig, p.cmd, err)
		}
	}
	return p.wait(t, stopTimeout)
}

// listening reports whether something listens on TCP port (IPv4 or IPv6),
// from /proc/net/tcp{,6}: state 0A, LISTEN.
func listening(port int) bool {
	hex := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			fs := strings.Fields(l)
			if len(fs) > 3 && strings.HasSuffix(fs[1], hex) && fs[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// waitListen waits until something listens on TCP port, at most
// listenTimeout, without connecting to it (a connection would count as a
// client). The test fails when the time runs out or server exits first.
func waitListen(t *testing.T, port int, server *proc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), listenTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !listening(port) {
		select {
		case <-ctx.Done():
			t.Fatalf("nothing listens on TCP port %d after %v: %s", port, listenTimeout, server)
		case <-server.done:
			t.Fatalf("exited before it listened on TCP port %d: %s", port, server)
		case <-tick.C:
		}
	}
}

// poll calls cond every 50 ms until it holds, at most d; false when the time ran out.
func poll(d time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return cond()
		case <-tick.C:
		}
	}
	return true
}

// jsonDir is a fresh directory for the test's JSON documents: when the test
// ends, every *.json file under it is validated against its schema
// (validateJSON), as the guest's schema stage did.
func jsonDir(t *testing.T) string {
	t.Helper()
	needBed(t)
	dir := t.TempDir() // removed after the check below (cleanups run last first)
	t.Cleanup(func() {
		n := 0
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
				return err
			}
			n++
			validateJSON(t, p)
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		t.Logf("schema: %d documents validated", n)
	})
	return dir
}

// validateJSON checks the document at path against its schema, by its kind:
// mr, doctor, isolation, cliffs and mesh documents against their own,
// the others (loopback, run) against schema.json.
func validateJSON(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return
	}
	kind := schema.KindOf(b)
	if err := schema.Validate(b); err != nil {
		t.Errorf("schema: %s (%s document): %v", path, kind, err)
		return
	}
	if kind != "result" {
		return
	}
	sch, err := currentSchema()
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Against(sch, b); err != nil {
		t.Errorf("schema: %s (result document, what the current rdmabench always writes): %v", path, err)
	}
}

// currentURL is schema.json plus the members the current rdmabench always
// writes (as bench/result's TestSchemaFiles checks).
const currentURL = "https://github.com/rdmabench/rdmabench/internal/e2e/current.schema.json"

const currentJSON = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "` + currentURL + `",
  "$ref": "` + schema.DocumentURL + `",
  "properties": {
    "environment": {"required": ["checks"]},
    "results": {"items": {"required": ["link_utilization"]}}
  }
}`

var currentSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for url, b := range map[string][]byte{schema.DocumentURL: result.SchemaJSON, schema.DoctorURL: result.DoctorSchemaJSON, currentURL: []byte(currentJSON)} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", url, err)
		}
		if err := c.AddResource(url, doc); err != nil {
			return nil, err
		}
	}
	return c.Compile(currentURL)
})

// readDoc decodes a result document (loopback, run).
func readDoc(t *testing.T, path string) *result.Document {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d result.Document
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(d.Results) == 0 {
		t.Fatalf("%s: no results:\n%s", path, tail(string(b), 4000))
	}
	return &d
}

// readAny decodes any JSON document.
func readAny(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// deep returns every value of key at any depth of v (jcheck's **.key).
func deep(v any, key string) []any {
	var vs []any
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == key {
				vs = append(vs, e)
			}
			vs = append(vs, deep(e, key)...)
		}
	case []any:
		for _, e := range x {
			vs = append(vs, deep(e, key)...)
		}
	}
	return vs
}

// someString reports whether some value of key at any depth of v is a
// string holding sub.
func someString(v any, key, sub string) bool {
	for _, e := range deep(v, key) {
		if s, ok := e.(string); ok && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// someEq reports whether some value of key at any depth of v is the
// string want (jcheck's **.key == "want").
func someEq(v any, key, want string) bool {
	for _, e := range deep(v, key) {
		if s, ok := e.(string); ok && s == want {
			return true
		}
	}
	return false
}

// anyString reports whether some string value at any depth of v holds sub
// (jcheck's ** ~ "sub").
func anyString(v any, sub string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, sub)
	case map[string]any:
		for _, e := range x {
			if anyString(e, sub) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if anyString(e, sub) {
				return true
			}
		}
	}
	return false
}

// summary is a short view of a document's results for failure messages.
func summary(d *result.Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "device %s (%s), transport %s, netdev %s\n", d.Env.Device, d.Env.DeviceReason, d.Env.Transport, d.Env.Netdev)
	for i, r := range d.Results {
		js, _ := json.Marshal(struct {
			Op, Mode, Transport, MRMode, InlineReason string
			Size, Inline, QPs                         int
			SRQ, Bidir                                bool
			Verify                                    *result.Verification
			Conn                                      *result.ConnSetup
		}{r.Op, r.Mode, r.Transport, r.MRMode, r.InlineReason, r.SizeBytes, r.Inline, r.QPs, r.SRQ, r.Bidirectional, r.Verify, r.Connection})
		fmt.Fprintf(&b, "  results[%d] %s\n", i, js)
	}
	return b.String()
}

// readLines is the lines of r.
func readLines(r io.Reader) []string {
	var ls []string
	s := bufio.NewScanner(r)
	for s.Scan() {
		ls = append(ls, s.Text())
	}
	return ls
}

// lines is the lines of s that match pred, for logs.
func lines(s string, pred func(string) bool) string {
	var ls []string
	for _, l := range readLines(strings.NewReader(s)) {
		if pred(l) {
			ls = append(ls, l)
		}
	}
	return strings.Join(ls, "\n")
}

// sysCmd runs a system command of the guest's setup (ip, rdma), which must
// exit 0.
func sysCmd(t *testing.T, name string, args ...string) {
	t.Helper()
	if o := runEnv(t, cmdTimeout, nil, name, args...); o.Code != 0 {
		t.Fatalf("want exit 0: %s", o)
	}
}

// downDevice adds rxa0, an rxe device on dummy9 that is never up (its port
// DOWN; it sorts before rxe0), removed again when the test ends. It changes
// the guest's devices: a test that calls it is not parallel.
func downDevice(t *testing.T) {
	t.Helper()
	sysCmd(t, "ip", "link", "add", "dummy9", "type", "dummy")
	t.Cleanup(func() {
		if o := runEnv(t, cmdTimeout, nil, "ip", "link", "delete", "dummy9"); o.Code != 0 {
			t.Errorf("restore: %s", o)
		}
	})
	sysCmd(t, "rdma", "link", "add", "rxa0", "type", "rxe", "netdev", "dummy9")
	t.Cleanup(func() { // before dummy9 goes (cleanups run last first)
		if o := runEnv(t, cmdTimeout, nil, "rdma", "link", "delete", "rxa0"); o.Code != 0 {
			t.Errorf("restore: %s", o)
		}
	})
}
