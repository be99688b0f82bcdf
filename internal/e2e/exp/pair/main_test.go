//go:build experiment

package pair

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/e2e/exp/expkit"
	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

func init() { vmtest.Layout(vmtest.Pair) }

func TestMain(m *testing.M) { expkit.Main(m) }

// peerDir is where the serve helper writes its files in g2.
const peerDir = "/tmp/rdmabench-exp"

// dev is the device on the wire in each guest.
const dev = "rxe2"

// bed is one experiment's pair: the peer (g2, the servers) and rdmabench.
type bed struct {
	t    *testing.T
	ctx  context.Context
	peer vmtest.Peer
	bin  string
}

func newBed(t *testing.T, ctx context.Context) *bed {
	if !vmtest.InGuest() {
		t.Skip("runs in the pair bed: make bench, bench-wire, pair-smoke, pair-timeline")
	}
	b := &bed{t: t, ctx: ctx, peer: vmtest.Peers(t)[0], bin: vmtest.Binary(t)}
	if err := expkit.Command(ctx, b.peer, "rm", "-rf", peerDir).Run(); err != nil {
		t.Fatalf("%s: rm -rf %s: %v", b.peer.Name, peerDir, err)
	}
	return b
}

// fetch copies g2's files (peerDir) into local, also when the test failed.
func (b *bed) fetch(local string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := expkit.FetchDir(ctx, b.peer, peerDir, local); err != nil {
		b.t.Logf("fetching %s's files: %v", b.peer.Name, err)
	}
}

// server is a server started in g2 by the serve helper.
type server struct {
	cmd  *vmtest.Cmd
	out  expkit.Lines
	done chan struct{}
	err  error
}

// serve starts cmd in g2 under the serve helper (flags: -tag, -ctr, -out,
// -port) and waits up to 120 s until it listens on port.
func (b *bed) serve(port int, flags []string, cmd ...string) (*server, error) {
	s := &server{done: make(chan struct{})}
	args := append(append(append([]string{}, flags...), "-dir", peerDir, "-port", fmt.Sprint(port), "--"), cmd...)
	s.cmd = expkit.Helper(b.ctx, b.t, b.peer, "serve", args...)
	s.cmd.Stdout, s.cmd.Stderr = &s.out, os.Stderr
	up := s.out.Contains("listening")
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %s: %v", b.peer.Name, strings.Join(cmd, " "), err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	ctx, cancel := context.WithTimeout(b.ctx, 120*time.Second)
	defer cancel()
	if _, err := expkit.Await(ctx, up, s.done, fmt.Sprintf("%s: %s listening on %d", b.peer.Name, cmd[0], port)); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// wait waits for the server's end (up to limit; then it is stopped).
func (s *server) wait(limit time.Duration) error {
	select {
	case <-s.done:
		return s.err
	case <-time.After(limit):
		s.stop()
		return fmt.Errorf("server still running after %v: stopped", limit)
	}
}

// stop ends the server (SIGTERM, then the agent's kill at the context's end).
func (s *server) stop() {
	s.cmd.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
	}
}

// local runs name with args in this guest, output to the file at out (and
// with echo, to stdout too); it returns the command's error.
func local(ctx context.Context, out string, echo bool, name string, args ...string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if echo {
		w := io.MultiWriter(f, os.Stdout)
		cmd.Stdout, cmd.Stderr = w, w
	}
	cmd.WaitDelay = 10 * time.Second
	return cmd.Run()
}

// tc runs tc with args in this guest.
func tc(ctx context.Context, args ...string) (string, error) {
	b, err := exec.CommandContext(ctx, "tc", args...).CombinedOutput()
	return string(b), err
}

func mkdir(t *testing.T, parts ...string) string {
	d := filepath.Join(parts...)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
