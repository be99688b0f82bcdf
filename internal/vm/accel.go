package vm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Accel is qemu's accelerator choice.
type Accel struct {
	Name string // "kvm" or "tcg"
	Why  string // the reason (probe verdict, missing device, ...)
}

// Args are qemu's arguments for it.
func (a Accel) Args() []string { return []string{"-accel", a.Name, "-cpu", "max"} }

// QemuPath is the qemu binary ($RDMABENCH_QEMU, default qemu-system-x86_64).
func QemuPath() string {
	if q := os.Getenv("RDMABENCH_QEMU"); q != "" {
		return q
	}
	return "qemu-system-x86_64"
}

// ChooseAccel picks KVM or TCG. KVM when the device (RDMABENCH_KVM_DEV,
// default /dev/kvm) opens read-write and a probe boot of the guest kernel under
// -accel kvm reaches its /init within RDMABENCH_KVM_PROBE_TIMEOUT seconds
// (default 20): some hosts have a /dev/kvm on which this kernel stalls right
// after decompression, or on which qemu aborts at once on an MSR. A probe that
// booted or stalled is cached for a day (key: host kernel, guest kernel, qemu,
// device, timeout) in the cache's accel/; a quick qemu failure is not (cheap to
// probe again, and its cause may be gone). RDMABENCH_ACCEL=tcg skips the probe;
// =kvm fails (ErrPrereq) without a working KVM.
func ChooseAccel(ctx context.Context, k *Kernel, initrd string) (Accel, error) {
	want := os.Getenv("RDMABENCH_ACCEL")
	if want == "" {
		want = "auto"
	}
	dev := os.Getenv("RDMABENCH_KVM_DEV")
	if dev == "" {
		dev = "/dev/kvm"
	}
	tmo := 20
	if v := os.Getenv("RDMABENCH_KVM_PROBE_TIMEOUT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 9999 {
			return Accel{}, fmt.Errorf("%w: RDMABENCH_KVM_PROBE_TIMEOUT wants whole seconds from 1 to 9999, got: %s", ErrPrereq, v)
		}
		tmo = n
	}
	var why string
	switch want {
	case "tcg":
		why = "RDMABENCH_ACCEL=tcg"
	case "auto", "kvm":
		if _, err := os.Stat(dev); err != nil {
			why = "no " + dev
		} else if f, err := os.OpenFile(dev, os.O_RDWR, 0); err != nil {
			why = dev + " is not readable and writable by this user"
		} else {
			f.Close()
			why = kvmProbe(ctx, k, initrd, dev, time.Duration(tmo)*time.Second)
		}
	default:
		return Accel{}, fmt.Errorf("%w: RDMABENCH_ACCEL wants auto, kvm or tcg, got: %s", ErrPrereq, want)
	}
	if v, ok := strings.CutPrefix(why, "ok"); ok {
		return Accel{Name: "kvm", Why: strings.TrimPrefix(v, ": ")}, nil
	}
	if want == "kvm" {
		return Accel{}, fmt.Errorf("%w: RDMABENCH_ACCEL=kvm but KVM does not work here: %s", ErrPrereq, why)
	}
	return Accel{Name: "tcg", Why: why}, nil
}

// kvmProbe returns "ok: ..." or why KVM is not usable; caches as ChooseAccel says.
func kvmProbe(ctx context.Context, k *Kernel, initrd, dev string, tmo time.Duration) string {
	qv, _ := exec.Command(QemuPath(), "--version").Output()
	first, _, _ := strings.Cut(string(qv), "\n")
	var uts syscall.Utsname
	syscall.Uname(&uts)
	rel := make([]byte, 0, 65)
	for _, c := range uts.Release {
		if c == 0 {
			break
		}
		rel = append(rel, byte(c))
	}
	h := sha256.Sum256([]byte(strings.Join([]string{string(rel), k.KVer, k.Version, first, dev, tmo.String()}, "\n")))
	cdir := writableCache("accel")
	cachef := ""
	if cdir != "" {
		cachef = filepath.Join(cdir, "kvm-"+hex.EncodeToString(h[:8]))
		if st, err := os.Stat(cachef); err == nil {
			if time.Since(st.ModTime()) < 24*time.Hour {
				if b, err := os.ReadFile(cachef); err == nil && len(b) > 0 {
					return strings.TrimSpace(string(b)) + ", cached in " + cachef
				}
			}
			os.Remove(cachef)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, tmo)
	defer cancel()
	args := []string{"-accel", "kvm", "-cpu", "max", "-smp", "1", "-m", "256", "-display", "none",
		"-monitor", "none", "-serial", "stdio", "-no-reboot", "-nic", "none",
		"-kernel", k.Vmlinuz, "-initrd", initrd,
		"-append", "console=ttyS0 panic=-1 quiet tsc=reliable no_timer_check " + GuestConfig{Probe: true}.Encode()}
	cmd := exec.CommandContext(ctx, QemuPath(), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 2 * time.Second
	t0 := time.Now()
	err := cmd.Run()
	var verdict string
	switch {
	case bytes.Contains(out.Bytes(), []byte(ProbeMarker)):
		verdict = fmt.Sprintf("ok: a probe boot under -accel kvm reached /init in %.1f s", time.Since(t0).Seconds())
	case ctx.Err() != nil:
		verdict = fmt.Sprintf("a probe boot under -accel kvm did not reach /init in %v", tmo)
	default:
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		last := ""
		for _, l := range strings.Split(errb.String(), "\n") {
			if strings.TrimSpace(l) != "" {
				last = strings.TrimSpace(l)
			}
		}
		if err != nil && code < 0 {
			last = err.Error()
		}
		return fmt.Sprintf("qemu -accel kvm failed (exit %d): %s", code, last)
	}
	if cachef != "" {
		os.WriteFile(cachef, []byte(verdict+"\n"), 0o644)
	}
	return verdict
}
