package vm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/internal/vm/proto"
)

// Options shape a bed.
type Options struct {
	Layout  string        // one, pair, mesh
	Mem     int           // MiB per guest (0: 3072 one, 2048 pair, 1024 mesh)
	SMP     int           // vCPUs per guest (0: 2)
	NUMA    int           // NUMA nodes per guest (0: 2 in one, 1 otherwise)
	Siw     string        // off, auto, require ("": auto)
	OutDir  string        // host directory mounted writable at /out in g1
	Append  string        // extra kernel arguments
	Boot    time.Duration // boot deadline per bed (0: 5 minutes)
	Console io.Writer     // where to copy the raw consoles as they come (nil: none)
	Log     io.Writer     // notes (accelerator, boot times); nil: os.Stderr
	// Background, when set, boots the bed ahead of its turn: its qemus run
	// under SCHED_IDLE and each guest is paused over QMP once its agent has
	// said hello, until Bed.Resume.
	Background *Background
}

// Background is a bed booting ahead of its turn (Options.Background). Its
// methods are safe for concurrent use with Boot.
type Background struct {
	// Urgent boots at GuestNice rather than under SCHED_IDLE (no guest runs
	// that the boot could slow down); the guests still pause after hello.
	Urgent bool

	mu     sync.Mutex
	fg     bool
	pids   []int
	guests []*Guest
	onFg   func() // the boot deadline's start (Boot), run once at Foreground
}

// deadlineFrom runs start at Foreground, or now if the bed is in the
// foreground already: a bed booting ahead gets only what the running guest
// leaves idle, so its boot deadline counts from when someone waits for it
// (in a loaded run a starved boot ahead passed the 300 s deadline before its
// run came, and was booted again).
func (bg *Background) deadlineFrom(start func()) {
	bg.mu.Lock()
	defer bg.mu.Unlock()
	if bg.fg || bg.Urgent {
		start()
		return
	}
	bg.onFg = start
}

// Guests are the guests started so far (for their consoles: Guest.Tail).
func (bg *Background) Guests() []*Guest {
	bg.mu.Lock()
	defer bg.mu.Unlock()
	return append([]*Guest(nil), bg.guests...)
}

// Foreground favours the bed's qemus from now on (someone waits for the boot)
// and stops it from pausing them after hello.
func (bg *Background) Foreground() {
	bg.mu.Lock()
	defer bg.mu.Unlock()
	bg.fg = true
	for _, pid := range bg.pids {
		favour(pid)
	}
	if bg.onFg != nil {
		bg.onFg()
		bg.onFg = nil
	}
}

// started records a qemu and sets its priority; it reports whether the guest
// stays in the background.
func (bg *Background) started(pid int) bool {
	if bg == nil {
		favour(pid)
		return false
	}
	bg.mu.Lock()
	defer bg.mu.Unlock()
	bg.pids = append(bg.pids, pid)
	if bg.fg || bg.Urgent {
		favour(pid)
	} else {
		idle(pid)
	}
	return !bg.fg
}

func (bg *Background) background() bool {
	if bg == nil {
		return false
	}
	bg.mu.Lock()
	defer bg.mu.Unlock()
	return !bg.fg
}

// Guest is one running qemu.
type Guest struct {
	Name    string
	Addr    string
	Hello   proto.Hello
	BootDur time.Duration // from qemu start to the agent's hello

	cmd      *exec.Cmd
	conn     net.Conn
	w        *proto.Writer
	console  *syncBuf
	qerr     *syncBuf
	exited   chan struct{}
	qmp      string     // the QMP socket
	mu       sync.Mutex // one run at a time over the serial port
	dead     bool
	tmp      string
	listener net.Listener
	bg       *Background // nil: a foreground guest
}

// Bed is a running layout.
type Bed struct {
	Layout string
	Guests []*Guest
	Accel  Accel
	opts   Options
	tmp    string
	paused bool // Options.Background: every guest stopped over QMP
}

// GuestError is a failure of the guest (boot, panic, setup, lost agent):
// exit status 125.
type GuestError struct{ Msg string }

func (e *GuestError) Error() string { return e.Msg }

type syncBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
	tee io.Writer
	pre string
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buf.Len() > 8<<20 { // keep the tail
		b := s.buf.Bytes()[s.buf.Len()-4<<20:]
		s.buf = *bytes.NewBuffer(append([]byte{}, b...))
	}
	if s.tee != nil {
		s.tee.Write(p)
	}
	return s.buf.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// Tail is the last n lines of a guest's console and qemu's stderr, for a
// failure report.
func (g *Guest) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(g.console.String(), "\r", ""), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := fmt.Sprintf("---- %s: last console lines ----\n%s\n", g.Name, strings.Join(lines, "\n"))
	if q := strings.TrimSpace(g.qerr.String()); q != "" {
		s += fmt.Sprintf("---- %s: qemu stderr ----\n%s\n", g.Name, q)
	}
	return s + "----------------------------\n"
}

func (o *Options) defaults() error {
	if o.Layout == "" {
		o.Layout = LayoutOne
	}
	if LayoutGuests(o.Layout) == 0 {
		return fmt.Errorf("%w: layout %q: want one, pair or mesh", ErrUsage, o.Layout)
	}
	if o.Mem == 0 {
		// one: a long-lived bed runs every package's tests in turn, their
		// files in the tmpfs upper layer; 2048 saw control handshakes time out
		o.Mem = 3072
		switch o.Layout {
		case LayoutPair:
			o.Mem = 2048
		case LayoutMesh:
			o.Mem = 1024
		}
	}
	if o.SMP == 0 {
		o.SMP = 2
	}
	if o.NUMA == 0 {
		o.NUMA = 1
		if o.Layout == LayoutOne {
			o.NUMA = 2
		}
	}
	if o.Siw == "" {
		o.Siw = "auto"
	}
	switch o.Siw {
	case "off", "auto", "require":
	default:
		return fmt.Errorf("%w: --siw wants off, auto or require, got: %s", ErrUsage, o.Siw)
	}
	if o.NUMA > 1 && o.SMP < o.NUMA {
		return fmt.Errorf("%w: --numa %d needs at least %d CPUs (--smp %d)", ErrUsage, o.NUMA, o.NUMA, o.SMP)
	}
	if o.NUMA > 1 && o.Mem < 64*o.NUMA {
		return fmt.Errorf("%w: --numa %d needs at least %d MB (--mem %d)", ErrUsage, o.NUMA, 64*o.NUMA, o.Mem)
	}
	if o.Boot == 0 {
		o.Boot = 5 * time.Minute
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	return nil
}

// errBootDeadline ends a boot not up within Options.Boot.
var errBootDeadline = errors.New("boot deadline")

// ErrUsage marks bad options (exit status 2).
var ErrUsage = errors.New("usage")

// NumaArgs are qemu's arguments for nodes NUMA nodes: the memory split among
// them (the last takes the remainder), the CPUs dealt out in blocks.
func NumaArgs(nodes, smp, mem int) []string {
	if nodes <= 1 {
		return nil
	}
	var a []string
	for i := 0; i < nodes; i++ {
		size := mem / nodes
		if i == nodes-1 {
			size = mem - (nodes-1)*(mem/nodes)
		}
		lo, hi := i*smp/nodes, (i+1)*smp/nodes-1
		a = append(a, "-object", fmt.Sprintf("memory-backend-ram,size=%dM,id=m%d", size, i),
			"-numa", fmt.Sprintf("node,nodeid=%d,cpus=%d-%d,memdev=m%d", i, lo, hi, i))
	}
	return a
}

// KernelArgs is the guest's command line. tsc=reliable: the guest reads the
// TSC through the vDSO, not the emulated HPET (1 us a clock_gettime);
// no_timer_check: a loaded host can starve the emulated 8254 during boot
// ("IO-APIC + timer doesn't work").
func KernelArgs(cfg GuestConfig, extra string) string {
	s := "console=ttyS0 panic=-1 quiet tsc=reliable no_timer_check " + cfg.Encode()
	if extra != "" {
		s += " " + extra
	}
	return s
}

// QemuArgs is one guest's qemu command line (without the binary).
func QemuArgs(acc Accel, o Options, k *Kernel, initrd, sock, netdev, mac string, cfg GuestConfig) []string {
	a := acc.Args()
	a = append(a, "-smp", strconv.Itoa(o.SMP), "-m", strconv.Itoa(o.Mem))
	a = append(a, NumaArgs(o.NUMA, o.SMP, o.Mem)...)
	a = append(a, "-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot",
		"-kernel", k.Vmlinuz, "-initrd", initrd, "-append", KernelArgs(cfg, o.Append),
		"-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
		"-device", "virtio-serial-pci",
		"-chardev", "socket,id=ctl,path="+sock,
		"-device", "virtserialport,chardev=ctl,name="+SerialPortName,
		"-qmp", "unix:"+QMPPath(sock)+",server=on,wait=off")
	if cfg.Out {
		a = append(a, "-virtfs", "local,path="+o.OutDir+",mount_tag=out,security_model=none,multidevs=remap")
	}
	if netdev == "" {
		a = append(a, "-nic", "none")
	} else {
		a = append(a, "-nic", "none", "-netdev", "socket,id=n0,"+netdev,
			"-device", "virtio-net-pci,netdev=n0,mac="+mac+",romfile=")
	}
	return a
}

// Boot starts a bed: every guest of the layout, until each agent has said
// hello (or the boot deadline). The caller holds the bed lock.
func Boot(ctx context.Context, o Options) (*Bed, error) {
	b, err := boot(ctx, o)
	if err != nil || o.Background != nil { // a bed booted ahead is checked when it resumes (vmexec)
		return b, err
	}
	if err := b.CheckClocks(ctx); err != nil {
		fmt.Fprintf(b.opts.Log, "vmexec: %v; booting again\n", err)
		b.Close()
		if b, err = boot(ctx, o); err != nil {
			return nil, err
		}
		if err := b.CheckClocks(ctx); err != nil {
			b.Close()
			return nil, err
		}
	}
	return b, nil
}

// boot is Boot without the clock check.
func boot(ctx context.Context, o Options) (*Bed, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	k, err := LoadKernel()
	if err != nil {
		return nil, err
	}
	if o.Siw == "require" && k.SiwKo == "" {
		return nil, fmt.Errorf("%w: siw required but no siw.ko for kernel %s in %s/siw (build it with: sudo scripts/install-deps.sh --siw-only)", ErrPrereq, k.KVer, CacheDir())
	}
	if _, err := exec.LookPath(QemuPath()); err != nil {
		return nil, fmt.Errorf("%w: %s not found: run scripts/install-deps.sh as root", ErrPrereq, QemuPath())
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logf := func(f string, a ...any) { fmt.Fprintf(o.Log, "vmexec: "+f+"\n", a...) }
	initrd, err := Initramfs(k, self, logf)
	if err != nil {
		return nil, err
	}
	acc, err := ChooseAccel(ctx, k, initrd)
	if err != nil {
		return nil, err
	}
	logf("accelerator: %s (%s)", strings.ToUpper(acc.Name), acc.Why)
	if n := ProbePriorities().Note(); n != "" {
		logf("%s", n)
	}
	tmp, err := os.MkdirTemp("", "vmexec.")
	if err != nil {
		return nil, err
	}
	b := &Bed{Layout: o.Layout, Accel: acc, opts: o, tmp: tmp}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	deadline := func() {
		t := time.AfterFunc(o.Boot, func() { cancel(errBootDeadline) })
		context.AfterFunc(ctx, func() { t.Stop() })
	}
	if o.Background != nil {
		o.Background.deadlineFrom(deadline)
	} else {
		deadline()
	}
	n := LayoutGuests(o.Layout)
	var peers []PeerAddr
	if n > 1 {
		for i := 1; i <= n; i++ {
			peers = append(peers, PeerAddr{Name: fmt.Sprintf("g%d", i), Addr: fmt.Sprintf("%s.%d", WireNet, i)})
		}
	}
	port := 0
	if n > 1 {
		if port, err = freePort(o.Layout == LayoutMesh); err != nil {
			b.Close()
			return nil, err
		}
	}
	for i := 1; i <= n; i++ {
		cfg := GuestConfig{Name: fmt.Sprintf("g%d", i), KDir: k.Dir, KVer: k.KVer, Siw: o.Siw, SiwKo: k.SiwKo}
		cfg.Out = i == 1 && o.OutDir != ""
		netdev, mac := "", ""
		if n > 1 {
			cfg.Wire = true
			cfg.Addr = peers[i-1].Addr
			for _, p := range peers {
				if p.Name != cfg.Name {
					cfg.Peers = append(cfg.Peers, p)
				}
			}
			mac = fmt.Sprintf("52:54:00:00:00:%02x", i)
			switch {
			case o.Layout == LayoutMesh:
				netdev = fmt.Sprintf("mcast=230.0.0.1:%d,localaddr=127.0.0.1", port)
			case i == 1:
				netdev = fmt.Sprintf("listen=127.0.0.1:%d", port)
			default:
				netdev = fmt.Sprintf("connect=127.0.0.1:%d", port)
			}
		}
		g, err := b.start(ctx, k, initrd, cfg, netdev, mac)
		if err != nil {
			b.Close()
			return nil, err
		}
		b.Guests = append(b.Guests, g)
		if o.Layout == LayoutPair && i == 1 {
			// g2 connects to g1's wire: wait until g1's qemu listens
			if err := waitListen(ctx, port, g); err != nil {
				b.Close()
				return nil, err
			}
		}
	}
	for _, g := range b.Guests {
		if err := g.waitHello(ctx, o.Boot); err != nil {
			b.Close()
			return nil, err
		}
		logf("%s up after %.1f s (%s)%s", g.Name, g.BootDur.Seconds(), strings.Join(g.Hello.Devices, " "), notes(g.Hello.Notes))
	}
	if o.Background.background() {
		for _, g := range b.Guests {
			if err := qmpDo(g.qmp, "stop"); err != nil {
				b.Close()
				return nil, &GuestError{fmt.Sprintf("%s: pausing the guest booted ahead: %v", g.Name, err)}
			}
		}
		b.paused = true
	}
	return b, nil
}

func notes(ns []string) string {
	if len(ns) == 0 {
		return ""
	}
	return "; " + strings.Join(ns, "; ")
}

// freePort finds a free TCP (or UDP) port on 127.0.0.1.
func freePort(udp bool) (int, error) {
	if udp {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port, nil
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Listening reports whether a TCP socket listens on port (any address), from
// /proc/net/tcp and tcp6: no connection is made.
func Listening(port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, _ := os.ReadFile(f)
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) > 3 && strings.HasSuffix(f[1], want) && f[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// WaitListen polls until a TCP socket listens on port or ctx ends.
func WaitListen(ctx context.Context, port int) error {
	for !Listening(port) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// waitListen waits until g's qemu listens on port for the wire (no
// connection: qemu's wire takes the first one as the peer).
func waitListen(ctx context.Context, port int, g *Guest) error {
	for {
		if Listening(port) {
			return nil
		}
		select {
		case <-g.exited:
			return &GuestError{fmt.Sprintf("%s: qemu exited before listening on 127.0.0.1:%d for the wire\n%s", g.Name, port, g.Tail(20))}
		case <-ctx.Done():
			return &GuestError{fmt.Sprintf("%s: qemu did not listen on 127.0.0.1:%d for the wire: %v", g.Name, port, ctx.Err())}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (b *Bed) start(ctx context.Context, k *Kernel, initrd string, cfg GuestConfig, netdev, mac string) (*Guest, error) {
	g := &Guest{Name: cfg.Name, Addr: cfg.Addr, exited: make(chan struct{}),
		console: &syncBuf{}, qerr: &syncBuf{}}
	g.bg = b.opts.Background
	if g.bg != nil {
		g.bg.mu.Lock()
		g.bg.guests = append(g.bg.guests, g)
		g.bg.mu.Unlock()
	}
	if b.opts.Console != nil {
		g.console.tee = &prefixWriter{w: b.opts.Console, pre: cfg.Name + ": "}
	}
	sock := filepath.Join(b.tmp, cfg.Name+".sock")
	g.qmp = QMPPath(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	g.listener = ln
	args := QemuArgs(b.Accel, b.opts, k, initrd, sock, netdev, mac, cfg)
	g.cmd = exec.Command(QemuPath(), args...)
	g.cmd.Stdout = g.console
	g.cmd.Stderr = g.qerr
	// a vmexec killed outright (SIGKILL, a crash) takes its guests with it
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	t0 := time.Now()
	if err := g.cmd.Start(); err != nil {
		ln.Close()
		return nil, fmt.Errorf("%w: start %s: %v", ErrPrereq, QemuPath(), err)
	}
	go func() { g.cmd.Wait(); close(g.exited) }()
	g.bg.started(g.cmd.Process.Pid) // its vCPU threads, made by this one, inherit its priority
	type acc struct {
		c   net.Conn
		err error
	}
	ch := make(chan acc, 1)
	go func() { c, err := ln.Accept(); ch <- acc{c, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		g.conn = r.c
	case <-g.exited:
		return g, &GuestError{fmt.Sprintf("%s: qemu exited at start\n%s", g.Name, g.Tail(20))}
	case <-ctx.Done():
		g.kill()
		return nil, &GuestError{fmt.Sprintf("%s: qemu did not open its control port: %v", g.Name, ctx.Err())}
	}
	g.w = proto.NewWriter(g.conn)
	g.BootDur = -time.Duration(t0.UnixNano()) // completed by waitHello
	return g, nil
}

// prefixWriter puts pre before every line.
type prefixWriter struct {
	w       io.Writer
	pre     string
	midLine bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var out []byte
	for _, c := range b {
		if !p.midLine {
			out = append(out, p.pre...)
			p.midLine = true
		}
		out = append(out, c)
		if c == '\n' {
			p.midLine = false
		}
	}
	p.w.Write(out)
	return len(b), nil
}

func (g *Guest) waitHello(ctx context.Context, limit time.Duration) error {
	// the boot deadline (errBootDeadline) or a cancelled boot (a bed shut
	// down while it boots ahead) ends the wait now
	stop := context.AfterFunc(ctx, func() { g.conn.SetReadDeadline(time.Now()) })
	typ, p, err := proto.ReadFrame(g.conn)
	stop()
	g.conn.SetReadDeadline(time.Time{})
	if err != nil && errors.Is(context.Cause(ctx), errBootDeadline) {
		<-waitOr(g.exited, 2*time.Second)
		return &TimeoutError{fmt.Sprintf("%s%s: not up after the boot deadline of %v", g.Tail(40), g.Name, limit)}
	}
	if err != nil && ctx.Err() != nil {
		return &GuestError{fmt.Sprintf("%s: boot cancelled: %v", g.Name, context.Cause(ctx))}
	}
	if err != nil {
		<-waitOr(g.exited, 2*time.Second)
		tail := g.Tail(40)
		if i := strings.LastIndex(g.console.String(), SetupFailMarker); i >= 0 {
			line, _, _ := strings.Cut(g.console.String()[i+len(SetupFailMarker):], "\n")
			return &GuestError{fmt.Sprintf("%s%s: guest setup failed: %s", tail, g.Name, strings.TrimSpace(line))}
		}
		if strings.Contains(g.console.String(), "Kernel panic") {
			return &GuestError{fmt.Sprintf("%s%s: guest kernel panicked", tail, g.Name)}
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return &TimeoutError{fmt.Sprintf("%s%s: not up after the boot deadline of %v", tail, g.Name, limit)}
		}
		return &GuestError{fmt.Sprintf("%s%s: guest died while booting (%v)", tail, g.Name, err)}
	}
	if typ != proto.THello {
		return &GuestError{fmt.Sprintf("%s: first frame %q, want hello", g.Name, typ)}
	}
	if err := json.Unmarshal(p, &g.Hello); err != nil {
		return &GuestError{fmt.Sprintf("%s: bad hello: %v", g.Name, err)}
	}
	g.BootDur += time.Duration(time.Now().UnixNano())
	if g.cmd != nil && g.cmd.Process != nil {
		// every thread qemu made after the first gets its priority too
		if g.bg.background() && !g.bg.Urgent {
			idle(g.cmd.Process.Pid)
		} else {
			favour(g.cmd.Process.Pid)
		}
	}
	return nil
}

// Resume brings a bed booted ahead of its turn (Options.Background) to the
// foreground: its qemus favoured, its guests running again. A foreground bed
// is left as it is.
func (b *Bed) Resume() error {
	if b.opts.Background == nil {
		return nil
	}
	b.opts.Background.Foreground()
	for _, g := range b.Guests {
		g.bg = nil
		if g.cmd != nil && g.cmd.Process != nil {
			favour(g.cmd.Process.Pid)
			if bad := unfavoured(g.cmd.Process.Pid); len(bad) > 0 {
				return &GuestError{fmt.Sprintf("%s: qemu threads %v stay outside SCHED_NORMAL after the boot ahead: the host refused to move them (%+v)", g.Name, bad, ProbePriorities())}
			}
		}
		if err := qmpDo(g.qmp, "cont"); err != nil {
			return &GuestError{fmt.Sprintf("%s: resuming the guest booted ahead: %v", g.Name, err)}
		}
	}
	b.paused = false
	return nil
}

func waitOr(ch chan struct{}, d time.Duration) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		select {
		case <-ch:
		case <-time.After(d):
		}
		close(out)
	}()
	return out
}

// TimeoutError: a deadline passed (exit status 124).
type TimeoutError struct{ Msg string }

func (e *TimeoutError) Error() string { return e.Msg }

func (g *Guest) kill() {
	if g.cmd != nil && g.cmd.Process != nil {
		g.cmd.Process.Kill()
	}
}

// Guest returns the named guest ("" = g1).
func (b *Bed) Guest(name string) (*Guest, error) {
	if name == "" {
		name = "g1"
	}
	for _, g := range b.Guests {
		if g.Name == name {
			return g, nil
		}
	}
	return nil, fmt.Errorf("%w: no guest %s in a %s bed", ErrUsage, name, b.Layout)
}

// Run runs one command in guest g, streaming its output, and returns its exit
// status. When ctx ends the command is killed (SIGKILL to its process group)
// and Run returns a TimeoutError (deadline) or ctx's error; sigs, if not nil,
// forwards signals to the command.
func (g *Guest) Run(ctx context.Context, run proto.Run, stdout, stderr io.Writer, sigs <-chan int) (proto.Exit, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dead {
		return proto.Exit{}, &GuestError{g.Name + ": the guest failed earlier"}
	}
	c := &proto.Client{R: g.conn, W: g.w, Stdout: stdout, Stderr: stderr}
	if err := c.Start(run); err != nil {
		g.dead = true
		return proto.Exit{}, &GuestError{fmt.Sprintf("%s: send the request: %v\n%s", g.Name, err, g.Tail(40))}
	}
	type res struct {
		e   proto.Exit
		err error
	}
	ch := make(chan res, 1)
	go func() { e, err := c.Wait(); ch <- res{e, err} }()
	var killed error
	var grace <-chan time.Time
	for {
		select {
		case r := <-ch:
			if r.err != nil {
				g.dead = true
				<-waitOr(g.exited, 2*time.Second)
				msg := "guest died while the command was running"
				if strings.Contains(g.console.String(), "Kernel panic") {
					msg = "guest kernel panicked"
				}
				return proto.Exit{}, &GuestError{fmt.Sprintf("%s%s: %s (%v)", g.Tail(40), g.Name, msg, r.err)}
			}
			if killed != nil {
				return r.e, killed
			}
			return r.e, nil
		case s := <-sigs:
			c.Signal(s)
		case <-ctx.Done():
			if killed == nil {
				c.Signal(9)
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					killed = &TimeoutError{fmt.Sprintf("%s: timed out: command killed", g.Name)}
				} else {
					killed = ctx.Err()
				}
				grace = time.After(10 * time.Second)
				ctx = context.Background()
			}
		case <-grace:
			g.dead = true
			return proto.Exit{}, killed
		}
	}
}

// Close powers the guests off (and kills what does not stop within 10 s).
func (b *Bed) Close() error {
	for _, g := range b.Guests {
		if g.cmd != nil && g.cmd.Process != nil {
			// its power-off runs only on what the next bed leaves idle
			idle(g.cmd.Process.Pid)
		}
		if b.paused { // a stopped guest cannot power itself off
			g.kill()
			continue
		}
		if g.w != nil {
			g.conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
			g.w.Frame(proto.TShutdown, nil)
		}
	}
	for _, g := range b.Guests {
		select {
		case <-g.exited:
		case <-time.After(10 * time.Second):
			g.kill()
			<-g.exited
		}
		if g.conn != nil {
			g.conn.Close()
		}
		g.listener.Close()
	}
	os.RemoveAll(b.tmp)
	return nil
}
