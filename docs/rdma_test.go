package docs

// The blocks that need RDMA (```sh rdma): run in the one-guest bed, where
// `go test -exec build/vmexec ./docs` runs this package's tests (the init
// below declares the layout: this test binary links no rdma-core, so the bed
// would not guess it needs RDMA).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

func init() {
	vmtest.Layout(vmtest.One)
	vmtest.GuestTests("^TestDocBlocks$") // the other tests read files: the host runs them (make test)
}

// requireEnv turns the skip of the RDMA blocks outside the bed into a failure
// (internal/testutil's RequireEnv; that package links rdma-core, this one
// does not).
const requireEnv = "RDMABENCH_REQUIRE_RDMA"

// rdmaBlockTimeout bounds one try of a block (the bed may run under TCG).
const rdmaBlockTimeout = 4 * time.Minute

// skipRDMABlock is what TestDocBlocks does with a ```sh rdma block where it
// cannot run it: outside the bed, skip (its syntax and flags were checked),
// or fail under RDMABENCH_REQUIRE_RDMA=1.
func skipRDMABlock(t *testing.T, b Block) {
	t.Helper()
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("%s: %s=1 but %s is unset: the block needs RDMA; run it in the bed: go test -exec build/vmexec ./docs",
			b.Pos(), requireEnv, vmtest.GuestEnv)
	}
	t.Skipf("%s needs RDMA: it runs in the bed (go test -exec build/vmexec ./docs); here its syntax and flags are checked", b.Pos())
}

// blockTry is one run of an RDMA block.
type blockTry struct {
	Output string
	Code   int
	Took   time.Duration
	Killed bool // it left processes running, killed after it
}

// runRDMABlock runs body with sh -e in dir, rdmabench (binDir) first on PATH,
// in its own process group, which is killed when the block's shell exits: a
// server it started in the background and left behind (it failed before its
// kill, or a perftest server still finishing) must not hold the control port
// against the next try or block. A block that does not exit want runs once
// more, logged as DOCS RETRY: under a loaded host a loopback can lose its
// peer's heartbeat (4 s) or progress (10 s), which other tests test; this one
// is about the blocks being right. It returns the tries.
func runRDMABlock(t *testing.T, pos, body, dir, binDir string, want int) []blockTry {
	t.Helper()
	script := filepath.Join(dir, "block.sh")
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var tries []blockTry
	for try := 1; try <= 2; try++ {
		bt := runOnce(t, pos, script, dir, binDir)
		tries = append(tries, bt)
		t.Logf("%s: exit %d in %v%s", pos, bt.Code, bt.Took.Round(time.Millisecond), map[bool]string{true: " (killed what it left running)"}[bt.Killed])
		if bt.Code == want || try == 2 {
			break
		}
		lines := strings.Split(strings.TrimRight(bt.Output, "\n"), "\n")
		t.Logf("DOCS RETRY %s: exit %d, want %d; its output's last lines:\n%s", pos, bt.Code, want, strings.Join(lines[max(0, len(lines)-5):], "\n"))
	}
	return tries
}

func runOnce(t *testing.T, pos, script, dir, binDir string) blockTry {
	t.Helper()
	outPath := filepath.Join(dir, "out.txt")
	f, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), rdmaBlockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-e", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	// a file, not a pipe: Wait returns when the block's shell exits, whatever
	// it left running with the file open
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	t0 := time.Now()
	err = cmd.Run()
	bt := blockTry{Took: time.Since(t0)}
	if cmd.Process != nil {
		pg := cmd.Process.Pid
		if syscall.Kill(-pg, syscall.SIGKILL) == nil {
			bt.Killed = true
			// until they are gone (zombies at most), 5 s at most
			for end := time.Now().Add(5 * time.Second); groupAlive(pg) && time.Now().Before(end); {
				time.Sleep(20 * time.Millisecond)
			}
			if groupAlive(pg) {
				t.Errorf("%s: processes of group %d still alive 5 s after SIGKILL", pos, pg)
			}
		}
	}
	b, _ := os.ReadFile(outPath)
	bt.Output = string(b)
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after %v (killed); output:\n%s", pos, rdmaBlockTimeout, bt.Output)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		bt.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: sh -e block.sh: %v", pos, err)
	}
	return bt
}

// groupAlive reports whether a process of group pg is alive (not a zombie).
func groupAlive(pg int) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces; cut after its ')'
		s := string(st)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pg) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// rdmaRunner runs the RDMA blocks of TestDocBlocks in the bed: each in its
// own directory, ForGuest's fewer iterations unless ```sh rdma full; a
// block with the same commands and exit as one before it is not run again
// (its sample is checked against that output).
type rdmaRunner struct {
	ran map[string]string // exit code and body → output
}

// run runs b (or finds its output) and returns the output.
func (r *rdmaRunner) run(t *testing.T, b Block) string {
	t.Helper()
	body := b.Body
	if !b.has("full") {
		body = ForGuest(body)
	}
	key := fmt.Sprintf("%d\x00%s", b.Exit(), body)
	if out, ok := r.ran[key]; ok {
		t.Logf("%s: the same commands ran above", b.Pos())
		return out
	}
	tries := runRDMABlock(t, b.Pos(), body, t.TempDir(), rdmabenchDir(t), b.Exit())
	last := tries[len(tries)-1]
	if last.Code != b.Exit() {
		t.Fatalf("%s: exit %d, want %d (twice); output:\n%s", b.Pos(), last.Code, b.Exit(), last.Output)
	}
	if r.ran == nil {
		r.ran = map[string]string{}
	}
	r.ran[key] = last.Output
	return last.Output
}
