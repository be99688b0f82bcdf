// Package vm is the guest test bed: Debian's kernel under qemu (KVM where it
// works, else TCG) with the host's root file system shared read-only over
// virtio-9p under a tmpfs overlay, SoftRoCE and soft-iWARP devices, and an
// agent (the vmexec binary itself, PID 1 in the guest) that runs commands for
// the host over virtio-serial and for the other guests over TCP. The protocol
// is internal/vm/proto; scripts/vmexec is the command; docs/testbed.md the
// user's view. Pure Go (no cgo): vmexec is built static, as the guest's /init.
package vm

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// CacheDir is where the bed keeps the kernel, siw.ko, initramfs archives and
// accelerator verdicts: $RDMABENCH_CACHE, default /var/cache/rdmabench.
func CacheDir() string {
	if d := os.Getenv("RDMABENCH_CACHE"); d != "" {
		return d
	}
	return "/var/cache/rdmabench"
}

// writableCache returns CacheDir()/sub if it exists or can be made and is
// writable, else ~/.cache/rdmabench/sub ($XDG_CACHE_HOME), else "".
func writableCache(sub string) string {
	cands := []string{filepath.Join(CacheDir(), sub)}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		cands = append(cands, filepath.Join(x, "rdmabench", sub))
	} else if h, err := os.UserHomeDir(); err == nil {
		cands = append(cands, filepath.Join(h, ".cache", "rdmabench", sub))
	}
	for _, d := range cands {
		if os.MkdirAll(d, 0o755) != nil {
			continue
		}
		f, err := os.CreateTemp(d, ".w*")
		if err != nil {
			continue
		}
		f.Close()
		os.Remove(f.Name())
		return d
	}
	return ""
}

// Kernel is the guest kernel install-deps.sh put in the cache.
type Kernel struct {
	Dir     string // the unpacked package (modules under Dir/lib/modules/KVer)
	KVer    string // uname -r in the guest
	Version string // the Debian package version
	Vmlinuz string
	SiwKo   string // siw.ko built for this kernel, "" when none
}

// ErrPrereq marks a missing host prerequisite (exit status 2).
var ErrPrereq = errors.New("host prerequisite missing")

// LoadKernel reads the kernel cache ($RDMABENCH_CACHE/kernel/current).
func LoadKernel() (*Kernel, error) {
	dir := filepath.Join(CacheDir(), "kernel", "current")
	b, err := os.ReadFile(filepath.Join(dir, ".rdmabench-kernel"))
	if err != nil {
		return nil, fmt.Errorf("%w: no guest kernel in %s (%v): run 'sudo scripts/install-deps.sh' (or set RDMABENCH_CACHE)", ErrPrereq, dir, err)
	}
	k := &Kernel{Dir: dir}
	var vmlinuz string
	for _, line := range strings.Split(string(b), "\n") {
		key, v, _ := strings.Cut(line, "=")
		switch key {
		case "KVER":
			k.KVer = v
		case "VERSION":
			k.Version = v
		case "VMLINUZ":
			vmlinuz = v
		}
	}
	k.Vmlinuz = filepath.Join(dir, vmlinuz)
	if k.KVer == "" || vmlinuz == "" {
		return nil, fmt.Errorf("%w: broken kernel cache in %s (no KVER or VMLINUZ): rerun install-deps.sh", ErrPrereq, dir)
	}
	if _, err := os.Stat(k.Vmlinuz); err != nil {
		return nil, fmt.Errorf("%w: kernel image: %v: rerun install-deps.sh", ErrPrereq, err)
	}
	if _, err := os.Stat(k.ModDir()); err != nil {
		return nil, fmt.Errorf("%w: kernel modules: %v: rerun install-deps.sh", ErrPrereq, err)
	}
	sd := filepath.Join(CacheDir(), "siw", k.KVer)
	if st, err := os.Stat(filepath.Join(sd, "siw.ko")); err == nil && st.Size() > 0 {
		if m, _ := os.ReadFile(filepath.Join(sd, ".rdmabench-siw")); m == nil || bytes.Contains(m, []byte("KERNEL_VERSION="+k.Version+"\n")) {
			k.SiwKo = filepath.Join(sd, "siw.ko")
		}
	}
	return k, nil
}

// ModDir is the kernel's module tree.
func (k *Kernel) ModDir() string { return filepath.Join(k.Dir, "lib", "modules", k.KVer) }

// ModuleDeps returns the module files mod needs, itself last, in load order
// (modprobe --show-depends on the kernel's tree). modprobe is the host's: in
// the guest it is the same file, over 9p.
func ModuleDeps(kdir, kver, mod string) ([]string, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command("modprobe", "-d", kdir, "-S", kver, "--show-depends", mod)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kernel %s has no module %s (modprobe --show-depends: %v: %s)", kver, mod, err, strings.TrimSpace(errb.String()))
	}
	return ParseShowDepends(&out), nil
}

// ParseShowDepends reads modprobe --show-depends output: the "insmod PATH
// [OPTIONS]" lines' paths in order, each once ("builtin NAME" lines name
// modules built into the kernel: nothing to load).
func ParseShowDepends(r io.Reader) []string {
	var paths []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "insmod" || seen[f[1]] {
			continue
		}
		seen[f[1]] = true
		paths = append(paths, f[1])
	}
	return paths
}

// rootModules: what the agent needs before the 9p root is mounted (the rest
// loads from the host's files over 9p).
var rootModules = []string{"virtio_pci", "9pnet_virtio", "9p", "overlay", "virtio_console"}

// initramfsFormat changes when the archive's layout does.
const initramfsFormat = "1"

// Initramfs returns the path of the cached initramfs for this kernel and agent
// (the running executable, which must be static: it is the guest's /init),
// building it when missing. Key: kernel release and package version, the
// agent's SHA-256, the module files' names and sizes.
func Initramfs(k *Kernel, agent string, logf func(string, ...any)) (string, error) {
	ab, err := os.ReadFile(agent)
	if err != nil {
		return "", fmt.Errorf("read the agent binary: %w", err)
	}
	if bytes.Contains(ab[:min(len(ab), 4096)], []byte("/lib64/ld-linux")) {
		return "", fmt.Errorf("%w: %s is dynamically linked; build it with CGO_ENABLED=0 (it is the guest's /init)", ErrPrereq, agent)
	}
	var mods []string
	seen := map[string]bool{}
	for _, m := range rootModules {
		ps, err := ModuleDeps(k.Dir, k.KVer, m)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrPrereq, err)
		}
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				mods = append(mods, p)
			}
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "format=%s kver=%s version=%s\n", initramfsFormat, k.KVer, k.Version)
	h.Write(ab)
	for _, m := range mods {
		st, err := os.Stat(m)
		if err != nil {
			return "", fmt.Errorf("%w: module %v", ErrPrereq, err)
		}
		fmt.Fprintf(h, "%s %d\n", m, st.Size())
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	name := "initramfs-" + k.KVer + "-" + key + ".cpio"
	dir := writableCache("initramfs")
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err == nil {
		now := time.Now()
		os.Chtimes(path, now, now) // in use
		return path, nil
	}
	if logf != nil {
		logf("building the initramfs for %s (%s)", k.KVer, path)
	}
	var buf bytes.Buffer
	c := newCpio(&buf)
	for _, d := range []string{"dev", "proc", "sys", "modules", "mnt", "mnt/lower", "mnt/upper", "newroot"} {
		c.Dir(d, 0o755)
	}
	c.CharDev("dev/console", 0o600, 5, 1)
	c.File("init", 0o755, ab)
	var order []string
	for i, m := range mods {
		b, err := os.ReadFile(m)
		if err != nil {
			return "", err
		}
		n := fmt.Sprintf("%02d-%s", i, filepath.Base(m))
		c.File("modules/"+n, 0o644, b)
		order = append(order, n)
	}
	c.File("modules/order", 0o644, []byte(strings.Join(order, "\n")+"\n"))
	if err := c.Close(); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".initramfs*")
	if err != nil {
		return "", err
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	tmp.Close()
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	// forget archives of other agents and kernels not used for a day (another
	// worktree's vmexec may be booting one right now)
	olds, _ := filepath.Glob(filepath.Join(dir, "initramfs-*.cpio"))
	for _, o := range olds {
		if st, err := os.Stat(o); err == nil && o != path && time.Since(st.ModTime()) > 24*time.Hour {
			os.Remove(o)
		}
	}
	return path, nil
}
