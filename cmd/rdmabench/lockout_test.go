package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/server"
)

// TestIdleFloodRefusal: under 150 idle connections (connect, send nothing)
// from 127.0.0.2, 'run' from 127.0.0.1 is served; under as many from
// 127.0.0.1 it is refused with the server's reason, exit 4 (not EOF).
func TestIdleFloodRefusal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- server.ListenAndServe(ctx, "127.0.0.1:"+port, server.Config{Device: "none-such-device", GIDIndex: -1})
	}()
	defer func() {
		cancel()
		<-done
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server does not listen")
		}
	}
	flood := func(src string) {
		d := net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		for range 150 {
			c, err := d.Dial("tcp", "127.0.0.1:"+port)
			if err != nil {
				t.Fatalf("idle connection from %s: %v", src, err)
			}
			t.Cleanup(func() { c.Close() })
		}
		time.Sleep(200 * time.Millisecond) // the accept loop takes them
	}
	client := func() (int, string) {
		var out, errOut bytes.Buffer
		code := run([]string{"run", "127.0.0.1", "-p", port, "--transport", "tcp", "--mode", "lat", "-n", "200", "--connect-timeout", "3s"}, &out, &errOut)
		return code, errOut.String()
	}
	flood("127.0.0.2")
	if code, stderr := client(); code != exitOK {
		t.Fatalf("client from 127.0.0.1 under 150 idle connections from 127.0.0.2: exit %d:\n%s", code, stderr)
	}
	flood("127.0.0.1")
	code, stderr := client()
	if code != exitPeer || !strings.Contains(stderr, "connections from 127.0.0.1 are already in the handshake") ||
		!strings.Contains(stderr, "--max-startups-per-addr 8") {
		t.Fatalf("client from the flooding address: exit %d, want %d with the refusal:\n%s", code, exitPeer, stderr)
	}
}
