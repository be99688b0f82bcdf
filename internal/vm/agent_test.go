package vm

import (
	"bytes"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/vm/proto"
)

// TestAgentServe: the agent's request loop on the host (not as PID 1): output,
// environment, exit status, signals, timeouts, a lost client.
func TestAgentServe(t *testing.T) {
	a := &agent{env: []string{"RDMABENCH_GUEST=g9"}}
	srv, cli := net.Pipe()
	go a.conn(srv, srv, true)
	defer cli.Close()
	w := proto.NewWriter(cli)
	run := func(r proto.Run, during func(c *proto.Client)) (proto.Exit, string, string) {
		t.Helper()
		var out, errb lockedBuf
		c := &proto.Client{R: cli, W: w, Stdout: &out, Stderr: &errb}
		if err := c.Start(r); err != nil {
			t.Fatal(err)
		}
		if during != nil {
			during(c)
		}
		e, err := c.Wait()
		if err != nil {
			t.Fatal(err)
		}
		return e, out.String(), errb.String()
	}
	e, out, errs := run(proto.Run{Argv: []string{"sh", "-c", "echo out $X $RDMABENCH_GUEST; pwd; echo err >&2; exit 3"}, Env: []string{"X=1", "PATH=" + os.Getenv("PATH")}, Dir: "/tmp"}, nil)
	if e.Code != 3 || out != "out 1 g9\n/tmp\n" || errs != "err\n" {
		t.Fatalf("exit %+v out %q err %q", e, out, errs)
	}
	e, _, _ = run(proto.Run{Argv: []string{"/nonexistent/cmd"}}, nil)
	if e.Code != 127 || e.Error == "" {
		t.Fatalf("missing command: %+v", e)
	}
	// a signal from the client ends the command: 128+n
	e, _, _ = run(proto.Run{Argv: []string{"sh", "-c", "echo up; exec sleep 30"}, Env: []string{"PATH=" + os.Getenv("PATH")}}, func(c *proto.Client) {
		time.Sleep(200 * time.Millisecond)
		c.Signal(15)
	})
	if e.Code != 128+15 {
		t.Fatalf("SIGTERM: %+v", e)
	}
	t0 := time.Now()
	e, _, _ = run(proto.Run{Argv: []string{"sleep", "30"}, Env: []string{"PATH=" + os.Getenv("PATH")}, Timeout: 0.3}, nil)
	if e.Code != 124 || !strings.Contains(e.Error, "timed out after 0.3 s") || time.Since(t0) > 10*time.Second {
		t.Fatalf("timeout: %+v after %v", e, time.Since(t0))
	}
	// a bad request gets an exit frame, and the connection still serves
	w.Frame(proto.TRun, []byte("{}"))
	if typ, p, err := proto.ReadFrame(cli); err != nil || typ != proto.TExit || !bytes.Contains(p, []byte("without a command")) {
		t.Fatalf("bad request: %q %s %v", typ, p, err)
	}
	if e, out, _ := run(proto.Run{Argv: []string{"echo", "again"}, Env: []string{"PATH=" + os.Getenv("PATH")}}, nil); e.Code != 0 || out != "again\n" {
		t.Fatalf("after a bad request: %+v %q", e, out)
	}
}

// TestAgentClientGone: over TCP a client that goes away kills its command.
func TestAgentClientGone(t *testing.T) {
	a := &agent{}
	srv, cli := net.Pipe()
	done := make(chan struct{})
	go func() { a.conn(srv, srv, true); close(done) }()
	pidf := t.TempDir() + "/pid"
	c := &proto.Client{R: cli, W: proto.NewWriter(cli), Stdout: &lockedBuf{}}
	c.Start(proto.Run{Argv: []string{"sh", "-c", "echo $$ >" + pidf + "; exec sleep 30"}, Env: []string{"PATH=" + os.Getenv("PATH")}})
	var pid string
	if !waitFor(5*time.Second, func() bool { b, _ := os.ReadFile(pidf); pid = strings.TrimSpace(string(b)); return pid != "" }) {
		t.Fatal("command did not start")
	}
	cli.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("agent still serving a closed connection after 10 s")
	}
	if _, err := os.Stat("/proc/" + pid + "/cmdline"); err == nil {
		b, _ := os.ReadFile("/proc/" + pid + "/stat")
		if !strings.Contains(string(b), ") Z") {
			t.Fatalf("command %s still runs after its client went away", pid)
		}
	}
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuf) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }
