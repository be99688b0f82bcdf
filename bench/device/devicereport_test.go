package device

import (
	"github.com/rdmabench/rdmabench/internal/golden"
	"github.com/rdmabench/rdmabench/internal/testutil"

	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/rdmabench/rdmabench/verbs"
)

// rxeOnLo mimics `rdma link add rxe0 type rxe netdev lo`.
func rxeOnLo() []Report {
	return []Report{{
		Name: "rxe0", Driver: "rdma_rxe", Firmware: "0.0.0", VendorID: 0xffffff, VendorPartID: 0, SoftwareRDMA: true, Transport: "RoCE",
		Ports: []PortReport{{
			Port: 1, State: "PORT_ACTIVE", LinkLayer: "Ethernet", ActiveMTU: 4096, MaxMTU: 4096,
			Speed: "2.5 Gbps", Width: "1X",
			GIDs: []GIDReport{
				{Index: 0, Type: "RoCE v2", GID: "fe80::200:ff:fe00:0", Netdev: "lo"},
				{Index: 1, Type: "RoCE v2", GID: "::ffff:127.0.0.1", Netdev: "lo"},
			},
			Netdev: "lo", Addresses: []string{"127.0.0.1", "::1"},
		}},
	}}
}

func TestDevicesWrite(t *testing.T) {
	var b bytes.Buffer
	if err := WriteReports(&b, rxeOnLo()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "devices.golden", b.Bytes())

	b.Reset()
	if err := WriteReports(&b, nil); err != nil || b.String() != "no RDMA devices\n" {
		t.Errorf("no devices: %q, %v", b.String(), err)
	}
}

func TestDevicesJSON(t *testing.T) {
	b, err := json.Marshal(rxeOnLo())
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"rxe0","driver":"rdma_rxe","firmware":"0.0.0","vendor_id":16777215,"vendor_part_id":0,` +
		`"software_rdma":true,"transport":"RoCE","ports":[{"port":1,"state":"PORT_ACTIVE","link_layer":"Ethernet","active_mtu":4096,` +
		`"max_mtu":4096,"speed":"2.5 Gbps","width":"1X","gids":[` +
		`{"index":0,"type":"RoCE v2","gid":"fe80::200:ff:fe00:0","netdev":"lo"},` +
		`{"index":1,"type":"RoCE v2","gid":"::ffff:127.0.0.1","netdev":"lo"}],"netdev":"lo","addresses":["127.0.0.1","::1"]}]}]`
	if string(b) != want {
		t.Errorf("unexpected JSON:\n got  %s\n want %s", b, want)
	}
	var back []Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(back); string(got) != want {
		t.Errorf("round trip changed the JSON:\n%s", got)
	}
}

// TestDevicesDescribe runs against the real devices; without one it checks
// that the verbs error comes back unchanged.
func TestDevicesDescribe(t *testing.T) {
	reps, err := Describe()
	if err != nil {
		if errors.Is(err, verbs.ErrNoKernelSupport) || errors.Is(err, verbs.ErrNoDevices) || errors.Is(err, verbs.ErrNoProvider) {
			if testutil.Required() {
				t.Fatalf("%s=1 but no RDMA device: %v", testutil.RequireEnv, err)
			}
			t.Skipf("no RDMA device: %v", err)
		}
		t.Fatal(err)
	}
	for _, d := range reps {
		if len(d.Ports) == 0 {
			t.Errorf("%s: no ports", d.Name)
		}
	}
	var b bytes.Buffer
	if err := WriteReports(&b, reps); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
}
