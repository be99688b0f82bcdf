package result

import (
	"fmt"
	"time"
)

// AcceptSchemaVersion is the version of the node acceptance document
// (accept.schema.json).
const AcceptSchemaVersion = 1

// KindAccept is AcceptDocument.Kind.
const KindAccept = "accept"

// The verdicts of a bound, a NIC and a node (bench/expect's).
const (
	VerdictAcceptPass = "pass"
	VerdictAcceptFail = "fail"
	VerdictAcceptTell = "cannot tell"
)

// AcceptVerdicts are the verdicts, best first.
var AcceptVerdicts = []string{VerdictAcceptPass, VerdictAcceptTell, VerdictAcceptFail}

// AcceptDocument is the JSON document of `rdmabench accept --json`: every
// ACTIVE port of the node, its doctor checks and loopback tests judged
// against the thresholds, one verdict per NIC and one for the node.
type AcceptDocument struct {
	SchemaVersion int              `json:"schema_version"` // AcceptSchemaVersion
	Kind          string           `json:"kind"`           // KindAccept
	Tool          string           `json:"tool"`           // "rdmabench"
	ToolVersion   string           `json:"tool_version"`
	CommandLine   []string         `json:"command_line"`
	Host          string           `json:"host"`
	Start         time.Time        `json:"start_time"`
	End           time.Time        `json:"end_time"`
	Thresholds    AcceptThresholds `json:"thresholds"`
	// Confidence is the level of the intervals the bounds are judged on.
	Confidence float64 `json:"confidence"`
	// Verdict is the node's: fail when a NIC failed, else cannot tell when
	// one could not be told, else pass.
	Verdict string      `json:"verdict"`
	NICs    []AcceptNIC `json:"nics"`
	// Skipped names the ports not checked and why ("mlx5_1 port 1: PORT_DOWN").
	Skipped []string `json:"skipped,omitempty"`
}

// AcceptThresholds are the bounds every NIC was held to, as given.
type AcceptThresholds struct {
	BW           string `json:"bw"`             // e.g. "90%" (of the port's data rate) or "375Gb/s"
	LatWriteSend string `json:"lat_write_send"` // e.g. "p50=2.5us"
	LatRead      string `json:"lat_read"`       // e.g. "p50=4.5us"
	Repeat       int    `json:"repeat"`         // runs per test (--repeat)
}

// AcceptNIC is one port's verdict and what it rests on.
type AcceptNIC struct {
	Device    string `json:"device"`
	Port      int    `json:"port"`
	LinkLayer string `json:"link_layer,omitempty"`
	LinkSpeed string `json:"link_speed,omitempty"` // e.g. "100.0 Gbps"
	// RateGbps is the rate a fractional bandwidth bound is of, 10^9 bit/s
	// (the data rate after line encoding; a soft device's nominal rate).
	RateGbps float64 `json:"rate_gbps"`
	NUMANode int     `json:"numa_node"` // the node the tests ran on; -1: none
	Verdict  string  `json:"verdict"`
	// Reasons say why a NIC did not pass, one a line.
	Reasons []string        `json:"reasons,omitempty"`
	Doctor  []DoctorFinding `json:"doctor"`
	Checks  []AcceptCheck   `json:"checks"`
	Error   string          `json:"error,omitempty"` // a test that did not complete
}

// AcceptCheck is one bound judged on one test (bench/expect's Verdict).
type AcceptCheck struct {
	Test      string   `json:"test"`   // "write bw 64K"
	Figure    string   `json:"figure"` // "bw" or a percentile, "p50"
	Bound     string   `json:"bound"`  // as given: "90%", "p50=2.5us"
	Limit     float64  `json:"limit"`  // Gb/s (a floor) for bw, ns (a ceiling) for a percentile
	Reference string   `json:"reference,omitempty"`
	Value     float64  `json:"value"` // the median of the runs, in Limit's unit
	Low       *float64 `json:"low,omitempty"`
	High      *float64 `json:"high,omitempty"`
	Runs      int      `json:"runs"`
	Method    string   `json:"method,omitempty"`
	Verdict   string   `json:"verdict"`
	Repeat    int      `json:"repeat,omitempty"` // the --repeat that would settle a cannot tell
	Note      string   `json:"note,omitempty"`
}

// Header returns the document's header.
func (d *AcceptDocument) Header() Header {
	return Header{d.SchemaVersion, d.Kind, d.Tool, d.ToolVersion}
}

// AcceptWorst is the worst of verdicts: fail, then cannot tell, then pass
// (pass for none).
func AcceptWorst(verdicts ...string) string {
	w := VerdictAcceptPass
	for _, v := range verdicts {
		switch {
		case v == VerdictAcceptFail:
			return v
		case v == VerdictAcceptTell:
			w = v
		}
	}
	return w
}

// Check checks an accept document: its header, the verdicts and that the
// node's is the worst of its NICs'.
func (d *AcceptDocument) Check() error {
	var c checker
	c.header(d.Header(), KindAccept)
	c.oneOf("verdict", d.Verdict, AcceptVerdicts, "verdict", false)
	c.listLen("nics", len(d.NICs))
	var vs []string
	for i, n := range d.NICs {
		p := fmt.Sprintf("nics[%d]", i)
		c.oneOf(p+".verdict", n.Verdict, AcceptVerdicts, "verdict", false)
		for j, k := range n.Checks {
			c.oneOf(fmt.Sprintf("%s.checks[%d].verdict", p, j), k.Verdict, AcceptVerdicts, "verdict", false)
		}
		vs = append(vs, n.Verdict)
	}
	if c.ok() && len(d.NICs) > 0 && d.Verdict != AcceptWorst(vs...) {
		c.fail("verdict", "%q, but the worst NIC's is %q", d.Verdict, AcceptWorst(vs...))
	}
	return c.err
}
