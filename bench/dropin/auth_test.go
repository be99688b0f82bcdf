package dropin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/auth"
	"github.com/rdmabench/rdmabench/bench/perftest"
)

// TestDropInServerKeyRefusesPerftest: with $RDMABENCH_AUTH_KEY set, the
// drop-in's server refuses what cannot prove the key: a -R server (perftest's
// exchange only) before it listens, and a perftest client before anything is
// allocated for it (no device needed: the refusal comes first).
func TestDropInServerKeyRefusesPerftest(t *testing.T) {
	t.Setenv(auth.KeyEnv, "a shared key long enough for the test")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	o, err := perftest.Parse(perftest.Tools["ib_send_lat"], []string{"-R"})
	if err != nil {
		t.Fatal(err)
	}
	err = server(ctx, Config{Options: o, Stdout: io.Discard, Stderr: io.Discard})
	var ue UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "-R with $"+auth.KeyEnv+" set") {
		t.Fatalf("-R with a key: %v, want the usage error naming -R and the key", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if o, err = perftest.Parse(perftest.Tools["ib_send_lat"], []string{"-p", fmt.Sprint(port)}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- server(ctx, Config{Options: o, Stdout: io.Discard, Stderr: io.Discard}) }()
	var c net.Conn
	for c == nil {
		if c, err = net.Dial("tcp", ln.Addr().String()); err != nil {
			if ctx.Err() != nil {
				t.Fatal("the drop-in's server never listened")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	defer c.Close()
	if _, err := c.Write([]byte("6.06\x00")); err != nil { // perftest's version string first
		t.Fatal(err)
	}
	err = <-done
	var ae *auth.Error
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "is perftest, which has no authentication") {
		t.Fatalf("a perftest client with a key set: %v, want the *auth.Error", err)
	}
}
