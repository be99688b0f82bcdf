package e2e

import (
	"encoding/json"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result/schema"
)

// TestHelpers checks the run helpers themselves, on any host: exit codes and
// output are captured, a listening port is seen in /proc/net/tcp without a
// connection, and a background process is stopped by a signal.
func TestHelpers(t *testing.T) {
	o := runEnv(t, 10*time.Second, []string{"E2E_X=42"}, "sh", "-c", "echo out $E2E_X; echo err >&2; exit 3")
	if o.Code != 3 || o.Stdout != "out 42\n" || o.Stderr != "err\n" || !strings.Contains(o.String(), "exit 3") {
		t.Errorf("runEnv: %s", o)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no TCP listener here: %v", err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	p := startEnv(t, time.Minute, nil, nil, "sleep", "60")
	waitListen(t, port, p) // returns at once: something listens
	if listening(1) {
		t.Error("port 1 listens?")
	}
	if code := p.stop(t, syscall.SIGTERM); code != -1 {
		t.Errorf("sleep after SIGTERM: exit %d, want -1 (a signal)", code)
	}
	seen := make(chan string, 1)
	p = startEnv(t, time.Minute, nil, func(l string) {
		select {
		case seen <- l:
		default:
		}
	}, "sh", "-c", "echo line >&2; exit 0")
	if code := p.wait(t, 10*time.Second); code != 0 || <-seen != "line" {
		t.Errorf("startEnv: %s", p)
	}
}

// TestSchemaCheck: the schema check the tests run on every document they
// wrote accepts a real guest document and names a missing member.
func TestSchemaCheck(t *testing.T) {
	validateJSON(t, "../../bench/result/testdata/guest/cm.json")
	b, err := os.ReadFile("../../bench/result/testdata/guest/cm.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m["environment"].(map[string]any), "checks")
	b, _ = json.Marshal(m)
	sch, err := currentSchema()
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Against(sch, b); err == nil || !strings.Contains(err.Error(), "checks") {
		t.Errorf("a document without environment.checks: %v, want an error naming checks", err)
	}
}
