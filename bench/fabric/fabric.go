package fabric

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Transports, as Env.Transport names them; TransportOf falls back on them
// for documents written before that field existed.
const (
	TransportInfiniBand = "InfiniBand"
	TransportRoCE       = "RoCE"
	TransportIWARP      = "iWARP"
	TransportTCP        = "TCP"
)

// Fabric is one column of a report: the documents of one transport, device,
// driver and host (a latency run and a bandwidth run, say).
type Fabric struct {
	// Label is the column heading, from the environment: transport,
	// device and driver, such as "RoCE rxe0 (rdma_rxe)", "iWARP siw1 (siw)"
	// or "TCP lo", with " on HOST" added when the fabrics come from
	// different hosts.
	Label     string
	Transport string // TransportOf the first document
	Device    string
	Driver    string
	Host      string
	Docs      []*result.Document // in the order given to New
	// Run numbers the columns of one fabric from 1: documents of a fabric
	// that hold the same test (two runs of it) make a column each.
	Run int
}

// overlaps reports whether d holds a test (op, mode, size, transport) that
// one of docs holds.
func overlaps(docs []*result.Document, d *result.Document) bool {
	keys := map[result.Key]bool{}
	for _, o := range docs {
		for i := range o.Results {
			keys[result.KeyOf(&o.Results[i])] = true
		}
	}
	for i := range d.Results {
		if keys[result.KeyOf(&d.Results[i])] {
			return true
		}
	}
	return false
}

// TCP reports whether f is the kernel-TCP baseline.
func (f *Fabric) TCP() bool { return f.Transport == TransportTCP }

// Cell is one fabric's result in a row.
type Cell struct {
	// Result is nil where the fabric has no such test.
	Result *result.Result
	// Send is set where Result is a TCP fabric's SEND result standing in
	// for the row's op (TCP has no WRITE or READ).
	Send bool
}

// Row is one op, mode and message size across the fabrics.
type Row struct {
	Op, Mode  string
	SizeBytes int
	Cells     []Cell // one per fabric, in Report.Fabrics order
	// Baseline is the baseline fabric's TCP SEND result of the row's mode
	// and size, the reference of the ratios; nil without one.
	Baseline *result.Result
	Flags    []Flag // settings that differ across the row's results
}

// Name names the row's test, such as "send lat 2B" or "read bw 64K".
func (r *Row) Name() string {
	return fmt.Sprintf("%s %s %s", r.Op, r.Mode, result.SizeName(r.SizeBytes))
}

// Report lines up the results of several fabrics.
type Report struct {
	Fabrics []Fabric
	// Base is the index in Fabrics of the TCP baseline (the first TCP
	// fabric), or -1 when no document is a TCP run.
	Base int
	Rows []Row // latency rows, then bandwidth rows; by op, then size
}

// New groups docs by fabric (transport, device, driver and host: documents
// of one fabric make one column, in order of first appearance) and lines
// up their results by op, mode and message size; TCP and RDMA results of
// one op and size share a row. Documents of one fabric that hold the same
// test are several runs of it: each makes a column of its own ("RoCE rxe0
// (rdma_rxe) run 2"), so that no run given is dropped. The first TCP fabric is the baseline: every row of a mode
// and size, whatever its op, takes the baseline's SEND result of that mode
// and size as reference, as TCP has no WRITE or READ.
func New(docs []*result.Document) *Report {
	rep := &Report{Base: -1}
	hosts := map[string]bool{}
	for _, d := range docs {
		if d != nil {
			hosts[d.Env.HostName()] = true
		}
	}
	byID := map[string][]int{} // a fabric's columns: one per run
	for _, d := range docs {
		if d == nil {
			continue
		}
		f := Fabric{Transport: TransportOf(d), Device: d.Env.Device, Driver: d.Env.Driver, Host: d.Env.HostName()}
		id := f.Transport + "\x00" + f.Device + "\x00" + f.Driver + "\x00" + f.Host
		i := -1
		for _, c := range byID[id] { // the first column of the fabric without d's tests
			if !overlaps(rep.Fabrics[c].Docs, d) {
				i = c
				break
			}
		}
		if i < 0 { // a new fabric, or another run of one: a column of its own
			f.Label = label(f, len(hosts) > 1)
			f.Run = len(byID[id]) + 1
			i = len(rep.Fabrics)
			byID[id] = append(byID[id], i)
			rep.Fabrics = append(rep.Fabrics, f)
		}
		rep.Fabrics[i].Docs = append(rep.Fabrics[i].Docs, d)
	}
	for _, cols := range byID {
		if len(cols) > 1 { // several runs of one fabric: each column says which
			for _, c := range cols {
				rep.Fabrics[c].Label += fmt.Sprintf(" run %d", rep.Fabrics[c].Run)
			}
		}
	}
	for i := range rep.Fabrics {
		if rep.Fabrics[i].TCP() {
			rep.Base = i
			break
		}
	}
	rep.Rows = rep.rows()
	for i := range rep.Rows {
		rep.Rows[i].Flags = rep.flags(&rep.Rows[i])
	}
	return rep
}

// label is the column heading of f.
func label(f Fabric, withHost bool) string {
	s := f.Transport
	if f.Device != "" {
		s += " " + f.Device
	}
	if f.Driver != "" && !f.TCP() {
		s += " (" + f.Driver + ")"
	}
	if withHost && f.Host != "" {
		s += " on " + f.Host
	}
	return s
}

// TransportOf returns the fabric of doc: Env.Transport when set; for older
// documents, TCP when its results are the TCP baseline, iWARP for siw,
// InfiniBand or RoCE by link layer, else "RDMA".
func TransportOf(doc *result.Document) string {
	e := &doc.Env
	switch {
	case e.Transport != "":
		return e.Transport
	case e.QPType == "TCP" || len(doc.Results) > 0 && doc.Results[0].Transport == result.TransportTCP:
		return TransportTCP
	case e.Driver == "siw" || strings.HasPrefix(e.Device, "siw"):
		return TransportIWARP
	case e.LinkLayer == "InfiniBand":
		return TransportInfiniBand
	case e.LinkLayer == "Ethernet":
		return TransportRoCE
	}
	return "RDMA"
}

// rowKey identifies a row: a test without its transport.
type rowKey struct {
	op, mode string
	size     int
}

// lookup returns f's first result of k.
func (f *Fabric) lookup(k rowKey) *result.Result {
	for _, d := range f.Docs {
		for j := range d.Results {
			r := &d.Results[j]
			if r.Op == k.op && r.Mode == k.mode && r.SizeBytes == k.size {
				return r
			}
		}
	}
	return nil
}

// cell returns f's cell of k: its result, or, for a TCP fabric without
// one, its SEND result of k's mode and size.
func (f *Fabric) cell(k rowKey) Cell {
	if r := f.lookup(k); r != nil {
		return Cell{Result: r}
	}
	if f.TCP() && k.op != result.OpSend {
		if r := f.lookup(rowKey{result.OpSend, k.mode, k.size}); r != nil {
			return Cell{Result: r, Send: true}
		}
	}
	return Cell{}
}

// rows lines up every test of every fabric: lat before bw, ops in
// result.Ops order (others after, by name), sizes ascending. A TCP fabric
// adds no rows of its own beyond its SEND tests.
func (rep *Report) rows() []Row {
	seen := map[rowKey]bool{}
	var keys []rowKey
	for _, f := range rep.Fabrics {
		for _, d := range f.Docs {
			for _, r := range d.Results {
				k := rowKey{r.Op, r.Mode, r.SizeBytes}
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
	}
	order := func(list []string, s string) int {
		if i := slices.Index(list, s); i >= 0 {
			return i
		}
		return len(list)
	}
	slices.SortStableFunc(keys, func(a, b rowKey) int {
		return cmp.Or(
			cmp.Compare(order(result.Modes, a.mode), order(result.Modes, b.mode)), strings.Compare(a.mode, b.mode),
			cmp.Compare(order(result.Ops, a.op), order(result.Ops, b.op)), strings.Compare(a.op, b.op),
			cmp.Compare(a.size, b.size))
	})
	rows := make([]Row, len(keys))
	for i, k := range keys {
		row := Row{Op: k.op, Mode: k.mode, SizeBytes: k.size, Cells: make([]Cell, len(rep.Fabrics))}
		for j := range rep.Fabrics {
			row.Cells[j] = rep.Fabrics[j].cell(k)
		}
		if rep.Base >= 0 {
			if c := row.Cells[rep.Base]; c.Result != nil && c.Result.Op == result.OpSend {
				row.Baseline = c.Result
			}
		}
		rows[i] = row
	}
	return rows
}
