//go:build experiment

package expkit

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

func TestLines(t *testing.T) {
	var l Lines
	a := l.Contains("round 2/")
	l.Write([]byte("mesh rank 2: round 1/3\nmesh rank 2: rou"))
	select {
	case s := <-a:
		t.Fatalf("matched early: %q", s)
	default:
	}
	l.Write([]byte("nd 2/3: x\n"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if s, err := Await(ctx, a, nil, "round 2"); err != nil || s != "mesh rank 2: round 2/3: x" {
		t.Fatalf("%q, %v", s, err)
	}
}

func TestListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := WaitListening(ctx, port); err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if Listening(port) {
		t.Errorf("port %d still listening after Close", port)
	}
}

func TestCountersAndSample(t *testing.T) {
	c := Counters("no-such-device")
	if !strings.Contains(c, "cpu_busy ") || !strings.Contains(c, "cpu_total ") {
		t.Errorf("Counters: %q", c)
	}
	s := Sample("no-such-device", "rb-3")
	parts := strings.Split(s, "|")
	if len(parts) != 4 || len(strings.Fields(parts[1])) != 7 || strings.Fields(parts[0])[1] != "rb-3" {
		t.Errorf("Sample: %q", s)
	}
}

// TestServe runs the serve helper around a listener that exits at its first
// connection: "listening" on stdout, the counter files, the exit status.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r, w, _ := os.Pipe()
	old := os.Stdout
	os.Stdout = w
	done := make(chan int)
	go func() {
		done <- serveHelper([]string{"-dir", dir, "-ctr", "x-ctr-1", "-out", "s.log", "-port", strconv.Itoa(port), "--",
			"python3", "-c", "import socket,sys\ns=socket.socket(); s.bind(('127.0.0.1'," + strconv.Itoa(port) + ")); s.listen(1); c,_=s.accept(); print('served'); sys.exit(3)"})
	}()
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	os.Stdout = old
	if got := string(buf[:n]); got != "listening\n" {
		t.Fatalf("serve said %q", got)
	}
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if rc := <-done; rc != 3 {
		t.Errorf("exit %d, want 3", rc)
	}
	for _, f := range []string{"x-ctr-1-0.txt", "x-ctr-1-1.txt", "s.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "s.log")); !strings.Contains(string(b), "served") {
		t.Errorf("s.log: %q", b)
	}
}
