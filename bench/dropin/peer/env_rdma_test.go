package peer

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/perftest/wire"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testutil"
)

// lockedLog is a trace writer both sides of a test share.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRDMAPerftestEnvBeforeExchange: each side of the drop-in facing
// perftest collects its environment (sysfs, the doctor's tools,
// dpkg-query: about a second under emulation) before its first record
// swap, never after the barrier after RTR. There a SEND receiver still
// collecting had no receives to repost while perftest's client sent (RNR
// NAKs, each a 0.64 ms wait: ib_send_bw with the drop-in as server at a
// tenth to a quarter of perftest's bandwidth), and a passive READ or
// atomic server took the CPU from the client's loop.
func TestRDMAPerftestEnvBeforeExchange(t *testing.T) {
	testutil.RequireRDMA(t)
	var log lockedLog
	dropInEnvHook = func(client bool) { fmt.Fprintf(&log, "env collected client=%v\n", client) }
	defer func() { dropInEnvHook = nil }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := spec.Spec{Op: result.OpSend, Mode: result.ModeBW, Size: 4096, Iters: 200, TxDepth: 128, RxDepth: 200, CQMod: 100,
		Threads: 1, QPTimeout: spec.DefaultQPTimeout, RetryCount: spec.DefaultRetryCount, RNRRetry: spec.DefaultRNRRetry,
		InlinePolicy: spec.InlinePerftest}
	test := wire.Test{Verb: wire.VerbSend, Conn: wire.ConnRC}
	cfg := func(client bool, who string) Config {
		return Config{Port: 1, GIDIndex: -1, Client: client, Spec: s, Test: test, Timeout: 30 * time.Second,
			Run: measure.Options{CPU: -1, Unit: result.UnitMiB}, Trace: prefixWriter{&log, who + " "}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srvErr := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			srvErr <- err
			return
		}
		defer c.Close()
		_, err = Run(ctx, c, cfg(false, "server"))
		srvErr <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := Run(ctx, c, cfg(true, "client")); err != nil {
		t.Fatalf("client: %v\n%s", err, log.String())
	}
	if err := <-srvErr; err != nil {
		t.Fatalf("server: %v\n%s", err, log.String())
	}
	// each side: its environment before its first exchange step
	for _, side := range []string{"client", "server"} {
		env, first := -1, -1
		for i, l := range strings.Split(log.String(), "\n") {
			switch {
			case env < 0 && l == fmt.Sprintf("env collected client=%v", side == "client"):
				env = i
			case first < 0 && strings.HasPrefix(l, side+" perftest exchange:"):
				first = i
			}
		}
		if env < 0 || first < 0 || env > first {
			t.Errorf("%s: environment collected at line %d, first exchange step at line %d (want the environment first):\n%s", side, env, first, log.String())
		}
	}
}

// prefixWriter writes each write to w behind prefix.
type prefixWriter struct {
	w      *lockedLog
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := p.w.Write(append([]byte(p.prefix), b...)); err != nil {
		return 0, err
	}
	return len(b), nil
}
