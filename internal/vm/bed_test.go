package vm

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNumaArgs(t *testing.T) {
	if a := NumaArgs(1, 2, 2048); a != nil {
		t.Fatalf("one node: %q", a)
	}
	got := NumaArgs(2, 2, 2049)
	want := []string{"-object", "memory-backend-ram,size=1024M,id=m0", "-numa", "node,nodeid=0,cpus=0-0,memdev=m0",
		"-object", "memory-backend-ram,size=1025M,id=m1", "-numa", "node,nodeid=1,cpus=1-1,memdev=m1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	if o.Layout != LayoutOne || o.Mem != 3072 || o.SMP != 2 || o.NUMA != 2 || o.Siw != "auto" {
		t.Fatalf("defaults: %+v", o)
	}
	m := Options{Layout: LayoutMesh}
	m.defaults()
	if m.Mem != 1024 || m.NUMA != 1 {
		t.Fatalf("mesh defaults: %+v", m)
	}
	for _, bad := range []Options{{Layout: "ring"}, {Siw: "maybe"}, {NUMA: 4, SMP: 2}, {NUMA: 2, SMP: 2, Mem: 100}} {
		if err := bad.defaults(); !errors.Is(err, ErrUsage) {
			t.Errorf("%+v: %v, want ErrUsage", bad, err)
		}
	}
}

func TestGuestConfigCmdline(t *testing.T) {
	c := GuestConfig{Name: "g2", Addr: "198.51.100.2", Peers: []PeerAddr{{"g1", "198.51.100.1"}}, KDir: "/k", KVer: "6.1", Siw: "auto", Wire: true}
	line := KernelArgs(c, "loglevel=7")
	if !strings.HasPrefix(line, "console=ttyS0 panic=-1 quiet tsc=reliable no_timer_check rdmabench=") || !strings.HasSuffix(line, " loglevel=7") {
		t.Fatalf("kernel args %q", line)
	}
	if len(line) > 1024 {
		t.Fatalf("kernel args %d bytes: near the 2048-byte x86 limit", len(line))
	}
	got, err := ParseCmdline("BOOT_IMAGE=x " + line)
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("parse: %+v %v", got, err)
	}
	if PeersEnv(got.Peers) != "g1=198.51.100.1" {
		t.Fatal(PeersEnv(got.Peers))
	}
	if _, err := ParseCmdline("quiet"); err == nil {
		t.Fatal("no config: no error")
	}
	if _, err := ParseCmdline("rdmabench=!!"); err == nil {
		t.Fatal("bad config: no error")
	}
}

func TestQemuArgs(t *testing.T) {
	o := Options{Layout: LayoutPair, OutDir: "/o"}
	o.defaults()
	k := &Kernel{Vmlinuz: "/k/vmlinuz"}
	a := strings.Join(QemuArgs(Accel{Name: "tcg"}, o, k, "/i", "/s.sock", "listen=127.0.0.1:5000", "52:54:00:00:00:01", GuestConfig{Name: "g1", Out: true}), " ")
	for _, want := range []string{"-accel tcg -cpu max -smp 2 -m 2048", "-no-reboot", "-serial stdio",
		"-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on",
		"-chardev socket,id=ctl,path=/s.sock", "virtserialport,chardev=ctl,name=rdmabench",
		"-virtfs local,path=/o,mount_tag=out", "-netdev socket,id=n0,listen=127.0.0.1:5000",
		"virtio-net-pci,netdev=n0,mac=52:54:00:00:00:01", "-qmp unix:/s.sock.qmp,server=on,wait=off"} {
		if !strings.Contains(a, want) {
			t.Errorf("qemu args lack %q:\n%s", want, a)
		}
	}
}

func TestPrefixWriter(t *testing.T) {
	var b bytes.Buffer
	p := &prefixWriter{w: &b, pre: "g1: "}
	p.Write([]byte("a\nb"))
	p.Write([]byte("c\n\nd\n"))
	if b.String() != "g1: a\ng1: bc\ng1: \ng1: d\n" {
		t.Fatalf("%q", b.String())
	}
}

func TestLinksRDMA(t *testing.T) {
	self, _ := os.Executable()
	got, err := LinksRDMA(self)
	if err != nil {
		t.Fatal(err)
	}
	if got {
		t.Fatal("internal/vm's test binary links libibverbs?")
	}
	if p, err := exec.LookPath("ibv_devinfo"); err == nil {
		if got, err := LinksRDMA(p); err != nil || !got {
			t.Fatalf("%s (links libibverbs): %v %v", p, got, err)
		}
	}
	if _, err := LinksRDMA("/nonexistent"); !errors.Is(err, ErrUsage) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestBootDeadlineFrom: a bed booting ahead starts its boot deadline when
// someone waits for it (Foreground), not while it boots on idle CPU; an
// urgent bed, or one already in the foreground, starts it at once.
func TestBootDeadlineFrom(t *testing.T) {
	for _, c := range []struct {
		name    string
		bg      *Background
		fgFirst bool
		atOnce  bool
	}{
		{"ahead", &Background{}, false, false},
		{"urgent", &Background{Urgent: true}, false, true},
		{"already waited for", &Background{}, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.fgFirst {
				c.bg.Foreground()
			}
			started := 0
			c.bg.deadlineFrom(func() { started++ })
			if got := started == 1; got != c.atOnce {
				t.Fatalf("started at once: %v, want %v", got, c.atOnce)
			}
			c.bg.Foreground()
			c.bg.Foreground()
			if started != 1 {
				t.Fatalf("deadline started %d times by Foreground, want once", started)
			}
		})
	}
}

// TestClockCheck: the rate and the guest it blames; /proc/uptime parsed or
// refused by name.
func TestClockCheck(t *testing.T) {
	if r := clockRate(10, 10.5, 500*time.Millisecond); r < 0.999 || r > 1.001 {
		t.Errorf("rate %v, want 1", r)
	}
	for _, tc := range []struct {
		rates map[string]float64
		want  string
	}{
		{map[string]float64{"g1": 1.02, "g2": 0.9}, ""},
		{map[string]float64{"g1": 1.0, "g2": 70}, "g2"},
		{map[string]float64{"g2": 0.14, "g1": 0.5}, "g1"},
		{map[string]float64{"g1": 1.0, "g2": 1.25}, "g2"},
	} {
		if got := clockOff(tc.rates); got != tc.want {
			t.Errorf("clockOff(%v) = %q, want %q", tc.rates, got, tc.want)
		}
	}
	if v, err := parseUptime("4676.28 405775.12\n"); err != nil || v != 4676.28 {
		t.Errorf("parseUptime: %v %v", v, err)
	}
	for _, bad := range []string{"", "x 1", "-1 2", "NaN 1"} {
		if _, err := parseUptime(bad); err == nil || !strings.Contains(err.Error(), "/proc/uptime") {
			t.Errorf("parseUptime(%q): %v, want an error naming /proc/uptime", bad, err)
		}
	}
}
