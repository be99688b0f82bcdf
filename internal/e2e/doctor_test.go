package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// TestDoctorEveryPort: doctor with no -d checks every port of the guest,
// active or not, in rail order: rxa0 (down, on dummy9: a port-state
// failure, exit 10), rxe0, rxe1 and siw1; with dummy0 at MTU 1500 rxe1's
// mtu row warns naming the netdev MTU it needs. -d narrows it to one port,
// and doctor HOST against a server on this host compares rail by rail. It
// changes the guest's devices and dummy0's MTU: not parallel.
func TestDoctorEveryPort(t *testing.T) {
	dir := jsonDir(t)
	bin(t)
	downDevice(t)
	sysCmd(t, "ip", "link", "set", "dev", "dummy0", "mtu", "1500")
	t.Cleanup(func() {
		if o := runEnv(t, cmdTimeout, nil, "ip", "link", "set", "dev", "dummy0", "mtu", "9000"); o.Code != 0 {
			t.Errorf("restore: %s", o)
		}
	})

	want := []string{"rxa0", "rxe0", "rxe1"} // rail order: soft devices by name
	if siw := os.Getenv("RDMABENCH_SIW_DEVICE"); siw != "" {
		want = append(want, siw)
	}
	js := filepath.Join(dir, "doctor-all.json")
	o := rb(t, "doctor", "--json", js)
	t.Logf("doctor:\n%s", o.Stdout)
	wantExit(t, o, 10, "Rail 0: ", "rxa0 port 1", "Ports checked: "+itoa(len(want))+" (", "failing: rxa0 port 1",
		"fix: set dummy0 MTU ≥ 4200 (jumbo frames) for a RoCE MTU of 4096")
	doc := readDoctor(t, js)
	var got []string
	for i, p := range doc.Ports {
		got = append(got, p.Local.Device)
		if p.Rail != i {
			t.Errorf("ports[%d].rail = %d", i, p.Rail)
		}
		st := map[string]result.DoctorFinding{}
		for _, f := range p.Findings {
			st[f.Check] = f
		}
		switch p.Local.Device {
		case "rxa0":
			if f := st["port-state"]; f.Status != result.DoctorFail {
				t.Errorf("rxa0 (down): port-state %+v, want fail", f)
			}
		case "rxe1":
			f := st["mtu"]
			if f.Status != result.DoctorWarn || !strings.Contains(f.Fix, "set dummy0 MTU ≥ 4200 (jumbo frames) for a RoCE MTU of 4096") {
				t.Errorf("rxe1 on dummy0 at MTU 1500: mtu %+v, want warn naming the fix", f)
			}
		case "rxe0":
			if f := st["port-state"]; f.Status != result.DoctorPass {
				t.Errorf("rxe0: port-state %+v, want pass", f)
			}
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ports %v, want %v (every port, in rail order)", got, want)
	}
	if doc.Status != result.DoctorFail {
		t.Errorf("status %q, want fail (rxa0 is down)", doc.Status)
	}

	// -d narrows it to one port, as before.
	one := filepath.Join(dir, "doctor-rxe0.json")
	o = rb(t, "doctor", "-d", "rxe0", "--json", one)
	if o.Code != 0 && o.Code != 10 {
		t.Errorf("doctor -d rxe0: exit %d: %s", o.Code, o)
	}
	if d := readDoctor(t, one); len(d.Ports) != 0 || d.Local.Device != "rxe0" {
		t.Errorf("doctor -d rxe0: %d ports, local %s; want rxe0 alone", len(d.Ports), d.Local.Device)
	}

	// doctor HOST: the server's host is this one, so rails can be told.
	const port = 18614
	srv := start(t, "server", "--bind", "192.0.2.1", "-p", itoa(port))
	waitListen(t, port, srv)
	peer := filepath.Join(dir, "doctor-peer.json")
	o = rb(t, "doctor", "192.0.2.1", "-p", itoa(port), "--json", peer)
	t.Logf("doctor HOST:\n%s", o.Stdout)
	wantExit(t, o, 10, "Paired with the server's ports rail by rail", "Both ends (rail 0):")
	d := readDoctor(t, peer)
	for i, p := range d.Ports {
		if p.Peer == nil || p.Peer.Device != p.Local.Device {
			t.Errorf("ports[%d] %s: peer %+v, want the same device on the same rail", i, p.Local.Device, p.Peer)
		}
	}
	srv.stop(t, syscall.SIGTERM)
	wantOutput(t, "the server's log", srv.stdout.String()+srv.stderr.String(), "ports)")
}

// readDoctor reads and checks a doctor document.
func readDoctor(t *testing.T, path string) *result.DoctorDocument {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := result.ReadDoctor(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d
}

func itoa(n int) string { return strconv.Itoa(n) }
