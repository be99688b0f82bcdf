// Package perftest speaks perftest's command line and prints perftest's
// tables, so that rdmabench can stand in for ib_send_lat, ib_write_bw and
// the other perftest tools (the drop-in mode, docs/perftest.md): Parse reads
// perftest's arguments into Options, and WriteHeader, WriteTable and
// WriteOutput print a result.Result as perftest 6.x prints its own figures,
// column for column. Pure Go: no device, no cgo; cmd/rdmabench wires it to
// the engine.
package perftest

import (
	"path/filepath"
	"strings"
)

// Verb names the operation of a perftest tool, as its test title does.
type Verb string

// The verbs of the eight tools.
const (
	Send   Verb = "send"
	Write  Verb = "write"
	Read   Verb = "read"
	Atomic Verb = "atomic"
)

// Tool is one perftest program: its verb and whether it measures latency
// (ib_*_lat) or bandwidth (ib_*_bw).
type Tool struct {
	Name string // e.g. "ib_send_lat"
	Verb Verb
	Lat  bool
}

// Tools are the perftest programs rdmabench can stand in for, by name.
var Tools = map[string]Tool{}

func init() {
	for _, v := range []Verb{Send, Write, Read, Atomic} {
		for _, lat := range []bool{true, false} {
			t := Tool{Verb: v, Lat: lat}
			t.Name = "ib_" + string(v) + "_" + t.mode()
			Tools[t.Name] = t
		}
	}
}

// ToolOf returns the tool that argv0 (a path: a link named after the
// tool) invokes, and whether it is one.
func ToolOf(argv0 string) (Tool, bool) {
	t, ok := Tools[filepath.Base(argv0)]
	return t, ok
}

// mode is "lat" or "bw".
func (t Tool) mode() string {
	if t.Lat {
		return "lat"
	}
	return "bw"
}

// Mode is the rdmabench mode of the tool: "lat" or "bw".
func (t Tool) Mode() string { return t.mode() }

// title is the verb as perftest's test title writes it.
func (t Tool) title() string {
	switch t.Verb {
	case Send:
		return "Send"
	case Write:
		return "RDMA_Write"
	case Read:
		return "RDMA_Read"
	}
	return "Atomic"
}

// readsOrAtomics reports whether the tool's operation needs outstanding
// read resources (perftest then shows "Outstand reads", not inline).
func (t Tool) readsOrAtomics() bool { return t.Verb == Read || t.Verb == Atomic }

// upper is s in upper case (a small helper for option values).
func upper(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }
