package vm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/internal/vm/proto"
	"golang.org/x/sys/unix"
)

// Console markers the host looks for.
const (
	ProbeMarker     = "rdmabench-kvm-probe-ok"
	SetupFailMarker = "rdmabench-setupfail: "
	SerialPortName  = "rdmabench"
)

// agent is the guest's PID 1.
type agent struct {
	cfg     GuestConfig
	console *os.File
	devices []string
	notes   []string
	env     []string // the guest's own variables, added to every run's environment
	start   time.Time
	guest   bool // PID 1 in a guest (not a test on the host)
}

func (a *agent) logf(format string, args ...any) {
	if a.console != nil {
		fmt.Fprintf(a.console, "vmexec-agent: "+format+"\n", args...)
	}
}

// fail reports a setup failure on the console (the host prints it) and powers off.
func (a *agent) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if a.console != nil {
		fmt.Fprintf(a.console, "\n%s%s\n", SetupFailMarker, msg)
	}
	powerOff()
}

func powerOff() {
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	for {
		time.Sleep(time.Hour)
	}
}

// AgentMain is vmexec as the guest's /init. It never returns.
func AgentMain() {
	a := &agent{start: time.Now(), guest: true}
	os.MkdirAll("/dev", 0o755)
	unix.Mount("devtmpfs", "/dev", "devtmpfs", 0, "")
	if f, err := os.OpenFile("/dev/console", os.O_RDWR, 0); err == nil {
		a.console = f
		unix.Dup2(int(f.Fd()), 1)
		unix.Dup2(int(f.Fd()), 2)
	}
	if err := unix.Mount("proc", "/proc", "proc", 0, ""); err != nil {
		a.fail("mount /proc: %v", err)
	}
	cl, _ := os.ReadFile("/proc/cmdline")
	cfg, err := ParseCmdline(string(cl))
	if err != nil {
		a.fail("%v", err)
	}
	a.cfg = cfg
	if cfg.Probe {
		fmt.Fprintf(a.console, "\n%s\n", ProbeMarker)
		powerOff()
	}
	if err := a.setup(); err != nil {
		a.fail("%v", err)
	}
	a.serve()
}

func (a *agent) setup() error {
	if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
		return fmt.Errorf("mount /sys: %v", err)
	}
	order, err := os.ReadFile("/modules/order")
	if err != nil {
		return fmt.Errorf("initramfs: %v", err)
	}
	for _, n := range strings.Fields(string(order)) {
		if err := loadModule("/modules/" + n); err != nil {
			return err
		}
	}
	if err := a.mountRoot(); err != nil {
		return err
	}
	os.Setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	os.Setenv("HOME", "/root")
	unix.Sethostname([]byte(a.cfg.Name))
	var rl = unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &rl); err != nil {
		return fmt.Errorf("memlock unlimited: %v", err)
	}
	a.env = []string{"RDMABENCH_GUEST=" + a.cfg.Name, "RDMABENCH_REQUIRE_RDMA=1"}
	return a.setupRDMA()
}

// mountRoot: the host's / over 9p (read-only) under an overlay with a tmpfs
// upper layer becomes the root.
func (a *agent) mountRoot() error {
	// cache=loose: the guest keeps the pages of what it read (binaries, shared
	// libraries) while it runs, so that a process start does not read its
	// binary and every library again over 9p (cache=none: 1.9 s for
	// 'rdmabench --version' under TCG, 0.6 s from the guest's tmpfs). Files the
	// host makes or replaces after boot (go test's binaries) still show: each
	// run starts by dropping the guest's dentries and inodes, and their pages
	// with them (agent.run).
	opts := "trans=virtio,version=9p2000.L,msize=512000,access=any,cache=loose"
	if err := unix.Mount("hostroot", "/mnt/lower", "9p", unix.MS_RDONLY, opts); err != nil {
		return fmt.Errorf("mount the host root (9p, %s): %v", opts, err)
	}
	if err := unix.Mount("tmpfs", "/mnt/upper", "tmpfs", 0, "mode=755"); err != nil {
		return fmt.Errorf("tmpfs for the overlay: %v", err)
	}
	os.MkdirAll("/mnt/upper/u", 0o755)
	os.MkdirAll("/mnt/upper/w", 0o755)
	ov := "lowerdir=/mnt/lower,upperdir=/mnt/upper/u,workdir=/mnt/upper/w"
	if err := unix.Mount("overlay", "/newroot", "overlay", 0, ov); err != nil {
		return fmt.Errorf("overlay over the 9p root (%s): %v", ov, err)
	}
	for _, m := range []string{"/dev", "/proc", "/sys"} {
		if err := unix.Mount(m, "/newroot"+m, "", unix.MS_MOVE, ""); err != nil {
			return fmt.Errorf("move %s into the new root: %v", m, err)
		}
	}
	if err := unix.Chdir("/newroot"); err != nil {
		return err
	}
	if err := unix.Mount(".", "/", "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("move the new root to /: %v", err)
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("chroot: %v", err)
	}
	unix.Chdir("/")
	for _, m := range []struct{ dir, fs, opts string }{
		{"/run", "tmpfs", "mode=755"},
		{"/dev/shm", "tmpfs", "mode=1777"},
		{"/dev/pts", "devpts", "gid=5,mode=620,ptmxmode=666"},
		{"/sys/kernel/debug", "debugfs", ""},
	} {
		os.MkdirAll(m.dir, 0o755)
		unix.Mount(m.fs, m.dir, m.fs, 0, m.opts)
	}
	// modprobe and friends in the guest find the guest kernel's modules
	mdir := "/lib/modules/" + a.cfg.KVer
	if _, err := os.Stat(mdir + "/modules.dep"); err != nil {
		os.MkdirAll("/lib/modules", 0o755)
		os.RemoveAll(mdir)
		if err := os.Symlink(filepath.Join(a.cfg.KDir, "lib/modules", a.cfg.KVer), mdir); err != nil {
			a.note("symlink %s: %v", mdir, err)
		}
	}
	if a.cfg.Out {
		os.MkdirAll("/out", 0o777)
		if err := unix.Mount("out", "/out", "9p", 0, "trans=virtio,version=9p2000.L,msize=512000,access=any"); err != nil {
			return fmt.Errorf("mount the --outdir share at /out: %v", err)
		}
	}
	return nil
}

func (a *agent) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	a.notes = append(a.notes, msg)
	a.logf("note: %s", msg)
}

// loadModule inserts one module file (EEXIST is fine).
func loadModule(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("module %s: %v", path, err)
	}
	defer f.Close()
	flags := 0
	if strings.HasSuffix(path, ".xz") || strings.HasSuffix(path, ".zst") || strings.HasSuffix(path, ".gz") {
		flags |= unix.MODULE_INIT_COMPRESSED_FILE
	}
	if err := unix.FinitModule(int(f.Fd()), "", flags); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("load module %s: %v", filepath.Base(path), err)
	}
	return nil
}

// loadMods loads modules and what they need from the kernel tree.
func (a *agent) loadMods(mods ...string) error {
	for _, m := range mods {
		ps, err := ModuleDeps(a.cfg.KDir, a.cfg.KVer, m)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if err := loadModule(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// sh runs a setup command (the host's ip, rdma, over 9p).
func sh(argv ...string) error {
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(limit time.Duration, cond func() bool) bool {
	end := time.Now().Add(limit)
	for {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func portActive(dev string) bool {
	b, _ := os.ReadFile("/sys/class/infiniband/" + dev + "/ports/1/state")
	return bytes.Contains(b, []byte("ACTIVE"))
}

// rxe adds an rxe device on netdev and waits for its port.
func (a *agent) rxe(dev, netdev string, limit time.Duration) error {
	if err := sh("rdma", "link", "add", dev, "type", "rxe", "netdev", netdev); err != nil {
		return err
	}
	if !waitFor(limit, func() bool { return portActive(dev) }) {
		st, _ := os.ReadFile("/sys/class/infiniband/" + dev + "/ports/1/state")
		return fmt.Errorf("%s port 1 not ACTIVE after %v (state %q)", dev, limit, strings.TrimSpace(string(st)))
	}
	a.devices = append(a.devices, dev)
	return nil
}

func (a *agent) dummy(name, addr string) error {
	// loading dummy makes dummy0 already
	if _, err := os.Stat("/sys/class/net/" + name); err != nil {
		if err := sh("ip", "link", "add", name, "type", "dummy"); err != nil {
			return err
		}
	}
	if err := sh("ip", "link", "set", name, "mtu", "9000", "up"); err != nil {
		return err
	}
	return sh("ip", "addr", "add", addr+"/24", "dev", name)
}

func (a *agent) setupRDMA() error {
	if _, err := ModuleDeps(a.cfg.KDir, a.cfg.KVer, "crc32_generic"); err == nil {
		a.loadMods("crc32_generic")
	}
	if err := a.loadMods("ib_uverbs", "rdma_ucm", "rdma_rxe", "dummy", "sch_netem", "8021q"); err != nil {
		return err
	}
	if err := sh("ip", "link", "set", "lo", "up"); err != nil {
		return err
	}
	os.WriteFile("/proc/sys/net/ipv4/conf/all/accept_local", []byte("1"), 0)
	if err := a.rxe("rxe0", "lo", 10*time.Second); err != nil {
		return err
	}
	if err := a.dummy("dummy0", CMAddr); err != nil {
		return err
	}
	if err := a.rxe("rxe1", "dummy0", 10*time.Second); err != nil {
		return err
	}
	if a.cfg.Siw != "off" {
		if err := a.siw(); err != nil {
			if a.cfg.Siw == "require" {
				return fmt.Errorf("siw: %v", err)
			}
			a.note("siw: %v: no siw1, continuing with rxe only", err)
		}
	}
	if a.cfg.Wire {
		if err := a.wire(); err != nil {
			return err
		}
	}
	a.moduleLists()
	return nil
}

// moduleLists writes /etc/rdmabench-modules[-NAME], the module files of each
// group in load order, as the shell bed's initramfs had them: tests insert a
// group with insmod (bench's guestModules).
func (a *agent) moduleLists() {
	groups := []struct {
		file string
		mods []string
	}{
		{"/etc/rdmabench-modules", []string{"ib_uverbs", "rdma_ucm", "rdma_rxe", "dummy"}},
		{"/etc/rdmabench-modules-net", []string{"virtio_pci", "virtio_net", "sch_netem"}},
		{"/etc/rdmabench-modules-vlan", []string{"8021q"}},
	}
	for _, g := range groups {
		var paths []string
		for _, m := range g.mods {
			ps, err := ModuleDeps(a.cfg.KDir, a.cfg.KVer, m)
			if err != nil {
				a.note("%s: %v", g.file, err)
				continue
			}
			for _, p := range ps {
				if !slices.Contains(paths, p) {
					paths = append(paths, p)
				}
			}
		}
		os.WriteFile(g.file, []byte(strings.Join(paths, "\n")+"\n"), 0o644)
	}
}

func (a *agent) siw() error {
	if a.cfg.SiwKo == "" {
		return errors.New("no siw.ko for this kernel (build it with: sudo scripts/install-deps.sh --siw-only)")
	}
	if err := a.loadMods("crc32c_generic"); err != nil {
		return err
	}
	// libcrc32c alone: its soft dependency would also pull crc32c-intel
	ps, err := ModuleDeps(a.cfg.KDir, a.cfg.KVer, "libcrc32c")
	if err != nil {
		return err
	}
	for _, p := range ps {
		if strings.Contains(filepath.Base(p), "libcrc32c") {
			if err := loadModule(p); err != nil {
				return err
			}
		}
	}
	if err := loadModule(a.cfg.SiwKo); err != nil {
		return err
	}
	if err := a.dummy("dummy1", SiwAddr); err != nil {
		return err
	}
	if err := sh("rdma", "link", "add", "siw1", "type", "siw", "netdev", "dummy1"); err != nil {
		return err
	}
	if !waitFor(10*time.Second, func() bool { return portActive("siw1") }) {
		return errors.New("siw1 port 1 not ACTIVE after 10s")
	}
	a.devices = append(a.devices, "siw1")
	a.env = append(a.env, "RDMABENCH_SIW_DEVICE=siw1", "RDMABENCH_SIW_ADDR="+SiwAddr)
	return nil
}

func (a *agent) wire() error {
	if err := a.loadMods("virtio_net"); err != nil {
		return err
	}
	if !waitFor(10*time.Second, func() bool { _, err := os.Stat("/sys/class/net/eth0"); return err == nil }) {
		return errors.New("no eth0 (virtio-net) after 10s")
	}
	if err := sh("ip", "link", "set", "eth0", "mtu", "9000", "up"); err != nil {
		return err
	}
	if err := sh("ip", "addr", "add", a.cfg.Addr+"/24", "dev", "eth0"); err != nil {
		return err
	}
	if err := a.rxe("rxe2", "eth0", 20*time.Second); err != nil {
		return err
	}
	a.env = append(a.env, "RDMABENCH_ADDR="+a.cfg.Addr, "RDMABENCH_PEERS="+PeersEnv(a.cfg.Peers))
	return nil
}

// serialPort finds the virtio-serial port named SerialPortName.
func serialPort() (string, error) {
	var dev string
	ok := waitFor(10*time.Second, func() bool {
		ms, _ := filepath.Glob("/sys/class/virtio-ports/*/name")
		for _, m := range ms {
			if b, _ := os.ReadFile(m); strings.TrimSpace(string(b)) == SerialPortName {
				dev = "/dev/" + filepath.Base(filepath.Dir(m))
				if _, err := os.Stat(dev); err == nil {
					return true
				}
			}
		}
		return false
	})
	if !ok {
		return "", fmt.Errorf("no virtio-serial port named %s after 10s", SerialPortName)
	}
	return dev, nil
}

func (a *agent) serve() {
	if a.cfg.Wire {
		ln, err := net.Listen("tcp", net.JoinHostPort(a.cfg.Addr, strconv.Itoa(proto.Port)))
		if err != nil {
			a.fail("listen on %s:%d: %v", a.cfg.Addr, proto.Port, err)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					a.logf("accept: %v", err)
					return
				}
				go func() {
					defer c.Close()
					a.conn(c, c, true)
				}()
			}
		}()
	}
	go reap()
	dev, err := serialPort()
	if err != nil {
		a.fail("%v", err)
	}
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		a.fail("open %s: %v", dev, err)
	}
	w := proto.NewWriter(f)
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
	if err := w.JSON(proto.THello, proto.Hello{Guest: a.cfg.Name, Devices: a.devices, Notes: a.notes, BootMs: ts.Nano() / 1e6}); err != nil {
		a.fail("hello on %s: %v", dev, err)
	}
	a.connW(f, w, false)
	a.logf("serial port closed: powering off")
	powerOff()
}

// reap collects orphans (PID 1's duty) that no exec.Cmd waits for.
func reap() {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, syscall.SIGCHLD)
	for range ch {
		// Wait4(-1) would race with exec.Cmd.Wait: reap only while no run is
		// active (runsMu keeps a run from starting meanwhile)
		runsMu.Lock()
		for runs.Load() == 0 {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		runsMu.Unlock()
	}
}

func (a *agent) conn(r interface{ Read([]byte) (int, error) }, wr interface{ Write([]byte) (int, error) }, dropKills bool) {
	a.connW(r, proto.NewWriter(wr), dropKills)
}

// connW serves one connection: runs one request at a time. dropKills: the
// connection ending kills the running command (TCP); the serial port does
// not end.
func (a *agent) connW(r interface{ Read([]byte) (int, error) }, w *proto.Writer, dropKills bool) {
	frames := make(chan frame)
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			t, p, err := proto.ReadFrame(br)
			frames <- frame{t, p, err}
			if err != nil {
				close(frames)
				return
			}
		}
	}()
	for f := range frames {
		if f.err != nil {
			return
		}
		switch f.typ {
		case proto.TRun:
			run, err := proto.DecodeRun(f.p)
			if err != nil {
				w.JSON(proto.TExit, proto.Exit{Code: 125, Error: err.Error()})
				continue
			}
			if !a.run(run, w, frames, dropKills) {
				return
			}
		case proto.TShutdown:
			a.logf("shutdown requested: powering off")
			powerOff()
		}
	}
}

type frame struct {
	typ byte
	p   []byte
	err error
}

var (
	runsMu sync.Mutex
	runs   atomic.Int64
)

// run runs one command; false when the connection ended.
func (a *agent) run(run proto.Run, w *proto.Writer, frames chan frame, dropKills bool) bool {
	// Files the host made after boot (a new test binary in /tmp/go-build...)
	// hide behind dentries the guest cached when they did not exist yet.
	if a.guest {
		os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0)
	}
	cmd := exec.Command(run.Argv[0], run.Argv[1:]...)
	cmd.Env = append(append([]string{}, run.Env...), a.env...)
	cmd.Dir = run.Dir
	cmd.Stdout = proto.Stream{W: w, Typ: proto.TStdout}
	cmd.Stderr = proto.Stream{W: w, Typ: proto.TStderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 2 * time.Second
	runsMu.Lock()
	runs.Add(1)
	err := cmd.Start()
	runsMu.Unlock()
	if err != nil {
		runs.Add(-1)
		code := 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		w.JSON(proto.TExit, proto.Exit{Code: code, Error: err.Error()})
		return true
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timeout <-chan time.Time
	if run.Timeout > 0 {
		t := time.NewTimer(time.Duration(run.Timeout * float64(time.Second)))
		defer t.Stop()
		timeout = t.C
	}
	alive, timedOut := true, false
	for {
		select {
		case err := <-done:
			runs.Add(-1)
			e := exitOf(cmd, err)
			if timedOut {
				e = proto.Exit{Code: 124, Error: fmt.Sprintf("timed out after %g s", run.Timeout)}
			}
			w.JSON(proto.TExit, e)
			return alive
		case <-timeout:
			timedOut = true
			unix.Kill(-pgid, unix.SIGKILL)
		case f, ok := <-frames:
			if !ok || f.err != nil {
				if dropKills {
					unix.Kill(-pgid, unix.SIGKILL)
				}
				alive = false
				frames = nil
				continue
			}
			if f.typ == proto.TSignal && len(f.p) == 1 {
				unix.Kill(-pgid, unix.Signal(f.p[0]))
			}
			if f.typ == proto.TShutdown {
				unix.Kill(-pgid, unix.SIGKILL)
				powerOff()
			}
		}
	}
}

func exitOf(cmd *exec.Cmd, err error) proto.Exit {
	if cmd.ProcessState == nil {
		return proto.Exit{Code: 125, Error: fmt.Sprintf("wait: %v", err)}
	}
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		if st.Signaled() {
			return proto.Exit{Code: 128 + int(st.Signal())}
		}
		return proto.Exit{Code: st.ExitStatus()}
	}
	if err != nil {
		return proto.Exit{Code: 125, Error: err.Error()}
	}
	return proto.Exit{}
}
