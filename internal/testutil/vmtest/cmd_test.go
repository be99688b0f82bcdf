package vmtest

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/vm/proto"
)

// fakeAgent answers on 127.0.0.1:proto.Port as a guest's agent would: "echo
// ARGS" prints them, "fail N" exits N, "hang" waits for a signal (128+n).
func fakeAgent(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(proto.Port)))
	if err != nil {
		t.Skipf("port %d busy here: %v", proto.Port, err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				w := proto.NewWriter(c)
				_, p, err := proto.ReadFrame(c)
				if err != nil {
					return
				}
				run, err := proto.DecodeRun(p)
				if err != nil {
					return
				}
				switch run.Argv[0] {
				case "echo":
					w.Frame(proto.TStdout, []byte(strings.Join(run.Argv[1:], " ")+"\n"))
					w.Frame(proto.TStderr, []byte("dir="+run.Dir+" env="+strings.Join(run.Env, ",")+"\n"))
					w.JSON(proto.TExit, proto.Exit{})
				case "fail":
					n, _ := strconv.Atoi(run.Argv[1])
					w.JSON(proto.TExit, proto.Exit{Code: n, Error: "failed on purpose"})
				case "hang":
					typ, p, err := proto.ReadFrame(c)
					if err != nil {
						return // the client went away: the agent kills the command
					}
					if typ == proto.TSignal {
						w.JSON(proto.TExit, proto.Exit{Code: 128 + int(p[0])})
					}
				}
			}()
		}
	}()
}

func TestCmd(t *testing.T) {
	fakeAgent(t)
	p := Peer{Name: "g2", Addr: "127.0.0.1"}
	ctx := context.Background()

	c := p.Command(ctx, "echo", "hello", "g2")
	c.Dir, c.Env = "/tmp", []string{"A=1"}
	var errb strings.Builder
	c.Stderr = &errb
	out, err := c.Output()
	if err != nil || string(out) != "hello g2\n" || errb.String() != "dir=/tmp env=A=1\n" || c.ExitCode() != 0 {
		t.Fatalf("Output: %q %v, stderr %q, exit %d", out, err, errb.String(), c.ExitCode())
	}

	c = p.Command(ctx, "fail", "3")
	if c.ExitCode() != -1 {
		t.Fatal("ExitCode before Start is not -1")
	}
	err = c.Run()
	var ee *ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || c.ExitCode() != 3 || !strings.Contains(err.Error(), "g2: exit status 3: failed on purpose") {
		t.Fatalf("Run: %v, exit %d", err, c.ExitCode())
	}

	c = p.Command(ctx, "hang")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); !errors.As(err, &ee) || c.ExitCode() != 128+15 {
		t.Fatalf("after SIGTERM: %v, exit %d", err, c.ExitCode())
	}

	// a context that ends drops the connection: Wait returns promptly with ctx's error
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	c = p.Command(cctx, "hang")
	t0 := time.Now()
	err = c.Run()
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) > 5*time.Second || c.ExitCode() != -1 {
		t.Fatalf("cancelled: %v after %v, exit %d", err, time.Since(t0), c.ExitCode())
	}
}
