package vm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fakeQemu writes a stand-in for qemu-system-x86_64 that counts its runs in
// a file and behaves as body says (sh text).
func fakeQemu(t *testing.T, dir, body string) (path, count string) {
	t.Helper()
	count = filepath.Join(dir, "runs")
	path = filepath.Join(dir, "qemu")
	script := "#!/bin/sh\necho x >>" + count + "\ncase \"$1\" in --version) echo 'QEMU emulator version 9.9.9 (fake)'; exit 0;; esac\n" + body + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, count
}

func qemuRuns(count string) int {
	b, _ := os.ReadFile(count)
	// each probe also asks --version once
	return strings.Count(string(b), "x")
}

// TestChooseAccel: the accelerator choice without booting anything: a fake
// qemu, a regular file as the KVM device, a private cache.
func TestChooseAccel(t *testing.T) {
	k := &Kernel{KVer: "6.1.0-test", Version: "1", Vmlinuz: "/nonexistent/vmlinuz"}
	const (
		works = `echo "rdmabench-kvm-probe-ok"; exit 0`
		stall = `exec sleep 30`
		abort = `echo 'qemu-system-x86_64: ../accel/kvm/kvm-all.c:1803: kvm_buf_set_msrs: Assertion failed.' >&2; exit 134`
	)
	cases := []struct {
		name  string
		env   map[string]string
		qemu  string // body; "" = no probe expected
		noDev bool
		want  string // accel name, or "err"
		whyRe string
		runs  int // qemu invocations (version + probe) on the first call
		again int // on a second call (cached verdicts run nothing)
	}{
		{name: "kvm works", qemu: works, want: "kvm", whyRe: "reached /init", runs: 2, again: 1},
		{name: "kvm stalls", qemu: stall, env: map[string]string{"RDMABENCH_KVM_PROBE_TIMEOUT": "1"}, want: "tcg", whyRe: "did not reach /init in 1s", runs: 2, again: 1},
		{name: "kvm aborts", qemu: abort, want: "tcg", whyRe: `exit 134\): .*kvm_buf_set_msrs`, runs: 2, again: 2},
		{name: "no device", noDev: true, want: "tcg", whyRe: "^no ", runs: 0, again: 0},
		{name: "forced tcg", qemu: works, env: map[string]string{"RDMABENCH_ACCEL": "tcg"}, want: "tcg", whyRe: "RDMABENCH_ACCEL=tcg", runs: 0},
		{name: "forced kvm without kvm", noDev: true, env: map[string]string{"RDMABENCH_ACCEL": "kvm"}, want: "err", whyRe: "RDMABENCH_ACCEL=kvm but KVM does not work here: no "},
		{name: "forced kvm, kvm works", qemu: works, env: map[string]string{"RDMABENCH_ACCEL": "kvm"}, want: "kvm", runs: 2, again: 1},
		{name: "bad accel", env: map[string]string{"RDMABENCH_ACCEL": "hvf"}, want: "err", whyRe: "wants auto, kvm or tcg, got: hvf"},
		{name: "bad timeout", qemu: works, env: map[string]string{"RDMABENCH_KVM_PROBE_TIMEOUT": "0"}, want: "err", whyRe: "from 1 to 9999, got: 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("RDMABENCH_CACHE", filepath.Join(dir, "cache"))
			t.Setenv("RDMABENCH_ACCEL", "")
			t.Setenv("RDMABENCH_KVM_PROBE_TIMEOUT", "")
			q, count := fakeQemu(t, dir, c.qemu)
			t.Setenv("RDMABENCH_QEMU", q)
			dev := filepath.Join(dir, "kvm")
			if !c.noDev {
				os.WriteFile(dev, nil, 0o666)
			}
			t.Setenv("RDMABENCH_KVM_DEV", dev)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			t0 := time.Now()
			acc, err := ChooseAccel(context.Background(), k, "/nonexistent/initrd")
			if c.want == "err" {
				if err == nil || !errors.Is(err, ErrPrereq) || !matches(err.Error(), c.whyRe) {
					t.Fatalf("err %v, want ErrPrereq matching %q", err, c.whyRe)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if acc.Name != c.want || !matches(acc.Why, c.whyRe) {
				t.Fatalf("got %s (%s), want %s matching %q", acc.Name, acc.Why, c.want, c.whyRe)
			}
			if got := qemuRuns(count); got != c.runs {
				t.Fatalf("qemu ran %d times, want %d", got, c.runs)
			}
			if c.name == "kvm stalls" && time.Since(t0) > 10*time.Second {
				t.Fatalf("a stalled probe took %v with a 1 s timeout", time.Since(t0))
			}
			acc2, err := ChooseAccel(context.Background(), k, "/nonexistent/initrd")
			if err != nil || acc2.Name != acc.Name {
				t.Fatalf("second call: %v %v", acc2, err)
			}
			if got := qemuRuns(count) - c.runs; got != c.again {
				t.Fatalf("second call ran qemu %d times, want %d", got, c.again)
			}
			if c.again == 1 && !strings.Contains(acc2.Why, "cached in") {
				t.Fatalf("second call not from the cache: %s", acc2.Why)
			}
		})
	}
}

// TestAccelCacheExpires: a verdict older than a day is probed again.
func TestAccelCacheExpires(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("RDMABENCH_CACHE", filepath.Join(dir, "cache"))
	t.Setenv("RDMABENCH_ACCEL", "")
	t.Setenv("RDMABENCH_KVM_PROBE_TIMEOUT", "")
	q, count := fakeQemu(t, dir, `echo "rdmabench-kvm-probe-ok"`)
	t.Setenv("RDMABENCH_QEMU", q)
	dev := filepath.Join(dir, "kvm")
	os.WriteFile(dev, nil, 0o666)
	t.Setenv("RDMABENCH_KVM_DEV", dev)
	k := &Kernel{KVer: "6.1.0-test", Version: "1"}
	if _, err := ChooseAccel(context.Background(), k, ""); err != nil {
		t.Fatal(err)
	}
	fs, _ := filepath.Glob(filepath.Join(dir, "cache", "accel", "kvm-*"))
	if len(fs) != 1 {
		t.Fatalf("cache files %v, want one", fs)
	}
	old := time.Now().Add(-25 * time.Hour)
	os.Chtimes(fs[0], old, old)
	acc, err := ChooseAccel(context.Background(), k, "")
	if err != nil || acc.Name != "kvm" || strings.Contains(acc.Why, "cached") {
		t.Fatalf("after a day: %+v %v, want a fresh probe", acc, err)
	}
	if n := qemuRuns(count); n != 4 {
		t.Fatalf("qemu ran %d times, want 4 (two probes)", n)
	}
}

func matches(s, re string) bool {
	if re == "" {
		return true
	}
	return regexpMatch(re, s)
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
