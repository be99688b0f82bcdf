package result

import (
	"time"
)

// DoctorSchemaVersion is the version of the doctor document
// (doctor.schema.json).
const DoctorSchemaVersion = 1

// KindDoctor is DoctorDocument.Kind, the member that tells a doctor
// document from the other documents.
const KindDoctor = "doctor"

// The statuses of a doctor check. Unknown is what could not be read: it is
// never reported as pass.
const (
	DoctorPass    = "pass"
	DoctorWarn    = "warn"
	DoctorFail    = "fail"
	DoctorUnknown = "unknown"
)

// DoctorDocument is the JSON document of `rdmabench doctor --json`: the
// checks of this host, and with a peer (doctor HOST) the peer's own checks
// and the comparison of both ends.
type DoctorDocument struct {
	SchemaVersion int       `json:"schema_version"` // DoctorSchemaVersion
	Kind          string    `json:"kind"`           // KindDoctor
	Tool          string    `json:"tool"`           // "rdmabench"
	ToolVersion   string    `json:"tool_version"`
	Time          time.Time `json:"time"`
	// Status is the worst status of Findings (and PeerFindings, and every
	// port's in Ports): fail, then warn, then unknown, then pass.
	Status   string          `json:"status"`
	Local    DoctorHost      `json:"local"`
	Findings []DoctorFinding `json:"findings"`
	// PeerAddress is the server's control address (doctor HOST); the peer
	// members are absent without one.
	PeerAddress  string          `json:"peer_address,omitempty"`
	Peer         *DoctorHost     `json:"peer,omitempty"`
	PeerFindings []DoctorFinding `json:"peer_findings,omitempty"` // the server's checks of its own host
	// Ports are every port checked, in rail order, when doctor checked
	// more than the one port of Local (no -d); Local and Findings repeat
	// one of them (the first, or with a peer the port by route).
	Ports []DoctorPort `json:"ports,omitempty"`
}

// DoctorPort is the checks of one RDMA port of a host, and with a peer
// those of the peer's port on the same rail.
type DoctorPort struct {
	// Rail is the port's index in the host's rail order (NUMA node, then
	// PCI address, then name; then port number), from 0.
	Rail     int             `json:"rail"`
	Local    DoctorHost      `json:"local"`
	Findings []DoctorFinding `json:"findings"` // with a peer, the comparison (peer-*) too
	// Peer and PeerFindings are the peer's port on the same rail and its
	// checks (doctor HOST, where the peer gave its ports).
	Peer         *DoctorHost     `json:"peer,omitempty"`
	PeerFindings []DoctorFinding `json:"peer_findings,omitempty"`
}

// AllFindings is every finding of the document: Findings, PeerFindings
// and each port's.
func (d *DoctorDocument) AllFindings() [][]DoctorFinding {
	out := [][]DoctorFinding{d.Findings, d.PeerFindings}
	for _, p := range d.Ports {
		out = append(out, p.Findings, p.PeerFindings)
	}
	return out
}

// DoctorHost is what one host exposes of its RDMA device, port and netdev,
// the facts both ends compare. Zero and empty values are unknown.
type DoctorHost struct {
	Host      string `json:"host"`
	Device    string `json:"device,omitempty"`
	Port      int    `json:"port,omitempty"`
	LinkLayer string `json:"link_layer,omitempty"` // "Ethernet", "InfiniBand"
	Netdev    string `json:"netdev,omitempty"`
	NetdevMTU int    `json:"netdev_mtu,omitempty"` // bytes, /sys/class/net/NETDEV/mtu
	ActiveMTU int    `json:"active_mtu,omitempty"` // the port's active (RoCE/IB) MTU, bytes
	Firmware  string `json:"firmware,omitempty"`   // fw_ver
	Rate      string `json:"rate,omitempty"`       // ports/N/rate, e.g. "100 Gb/sec (4X EDR)"
	// GIDTypes are the distinct GID types of the port's populated GIDs,
	// sorted ("IB/RoCE v1", "RoCE v2").
	GIDTypes  []string `json:"gid_types,omitempty"`
	PCIeSpeed string   `json:"pcie_speed,omitempty"` // current_link_speed, e.g. "16.0 GT/s PCIe"
	PCIeWidth string   `json:"pcie_width,omitempty"` // current_link_width, lanes
}

// DoctorFinding is one check's verdict.
type DoctorFinding struct {
	Check  string `json:"check"`  // e.g. "mtu", "pcie-link"
	Status string `json:"status"` // DoctorPass, DoctorWarn, DoctorFail or DoctorUnknown
	Detail string `json:"detail"` // what was read
	Fix    string `json:"fix,omitempty"`
}

// DoctorCheck is a finding as the environment of a result records it
// (Env.Doctor): the check and its status.
type DoctorCheck struct {
	Check  string `json:"check"`
	Status string `json:"status"`
}

// DoctorWorst returns the worst status of the findings: fail, warn,
// unknown, pass (pass when there are none).
func DoctorWorst(fs ...[]DoctorFinding) string {
	rank := map[string]int{DoctorPass: 0, DoctorUnknown: 1, DoctorWarn: 2, DoctorFail: 3}
	worst := DoctorPass
	for _, list := range fs {
		for _, f := range list {
			if rank[f.Status] > rank[worst] {
				worst = f.Status
			}
		}
	}
	return worst
}

// IsDoctorDocument reports whether data is, by its shape, a doctor
// document: a JSON object whose "kind" is KindDoctor.
func IsDoctorDocument(data []byte) bool {
	return isKind(data, KindDoctor)
}

// ReadDoctor decodes and checks (DoctorDocument.Check) a doctor document.
func ReadDoctor(data []byte) (*DoctorDocument, error) {
	d, err := readKind(data, KindDoctor, "doctor document", func(d *DoctorDocument) string { return d.Kind })
	if err == nil {
		err = d.Check()
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// WriteDoctorJSON writes doc to path ("-": stdout), with its version, kind,
// tool and status set.
func WriteDoctorJSON(path string, doc *DoctorDocument) error {
	d := *doc
	d.SchemaVersion, d.Kind, d.Tool = DoctorSchemaVersion, KindDoctor, "rdmabench"
	if d.Findings == nil {
		d.Findings = []DoctorFinding{}
	}
	for i := range d.Ports {
		if d.Ports[i].Findings == nil {
			d.Ports[i].Findings = []DoctorFinding{}
		}
	}
	d.Status = DoctorWorst(d.AllFindings()...)
	return WriteJSON(path, &d)
}
