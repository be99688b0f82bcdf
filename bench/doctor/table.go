package doctor

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rdmabench/rdmabench/bench/result"
)

// WriteReport prints doc as tables: this host's checks, the server's, and
// the comparison of both ends, each row the check, its status, what was
// read and, under it, the fix; with every port checked (doc.Ports) one
// such set of tables per port, and a line that counts the ports by their
// worst finding; then the counts of each status. why says why this
// host's device was chosen, pairing how the ports were paired with the
// peer's ("" to leave either out).
func WriteReport(w io.Writer, doc *result.DoctorDocument, why, pairing string) error {
	if len(doc.Ports) == 0 {
		fmt.Fprintf(w, "This host: %s\n", describe(doc.Local, why))
		writeSet(w, doc.Findings, doc.Peer, doc.PeerFindings, doc.PeerAddress, "")
	} else {
		fmt.Fprintf(w, "This host: %s", doc.Local.Host)
		if why != "" {
			fmt.Fprintf(w, " (%s)", why)
		}
		fmt.Fprintln(w)
		if pairing != "" {
			fmt.Fprintf(w, "Paired with the server's ports %s\n", pairing)
		}
		for _, p := range doc.Ports {
			fmt.Fprintf(w, "\nRail %d: %s\n", p.Rail, describe(p.Local, ""))
			writeSet(w, p.Findings, p.Peer, p.PeerFindings, doc.PeerAddress, fmt.Sprintf(" (rail %d)", p.Rail))
		}
		writePortCounts(w, doc.Ports)
	}
	n := map[string]int{}
	all := doc.AllFindings()
	if len(doc.Ports) > 0 { // Local and Findings repeat a port
		all = all[2:]
	}
	for _, fs := range all {
		for _, f := range fs {
			n[f.Status]++
		}
	}
	_, err := fmt.Fprintf(w, "\nStatus: %s (%d fail, %d warn, %d unknown, %d pass)\n", strings.ToUpper(result.DoctorWorst(doc.AllFindings()...)),
		n[result.DoctorFail], n[result.DoctorWarn], n[result.DoctorUnknown], n[result.DoctorPass])
	return err
}

// writeSet prints one port's tables: its checks, and with a peer the
// peer's checks and the comparison of both ends.
func writeSet(w io.Writer, findings []result.DoctorFinding, peer *result.DoctorHost, peerFindings []result.DoctorFinding, addr, rail string) {
	var local, both []result.DoctorFinding
	for _, f := range findings {
		if strings.HasPrefix(f.Check, "peer-") {
			both = append(both, f)
		} else {
			local = append(local, f)
		}
	}
	writeTable(w, local)
	if peer != nil {
		fmt.Fprintf(w, "\nServer %s%s: %s\n", addr, rail, describe(*peer, ""))
		writeTable(w, peerFindings)
		fmt.Fprintf(w, "\nBoth ends%s:\n", rail)
		writeTable(w, both)
	}
}

// writePortCounts prints how many ports were checked and how many of
// them have each worst status, e.g. "Ports checked: 4 (2 pass, 1 warn,
// 1 fail, 0 unknown)", and names those that fail.
func writePortCounts(w io.Writer, ports []result.DoctorPort) {
	n := map[string]int{}
	var failed []string
	for _, p := range ports {
		st := result.DoctorWorst(p.Findings, p.PeerFindings)
		n[st]++
		if st == result.DoctorFail {
			failed = append(failed, fmt.Sprintf("%s port %d", p.Local.Device, p.Local.Port))
		}
	}
	fmt.Fprintf(w, "\nPorts checked: %d (%d pass, %d warn, %d fail, %d unknown)", len(ports),
		n[result.DoctorPass], n[result.DoctorWarn], n[result.DoctorFail], n[result.DoctorUnknown])
	if len(failed) > 0 {
		fmt.Fprintf(w, "; failing: %s", strings.Join(failed, ", "))
	}
	fmt.Fprintln(w)
}

// describe names a host's device, port and netdev.
func describe(h result.DoctorHost, why string) string {
	s := h.Host
	if h.Device != "" {
		s += fmt.Sprintf(", %s port %d", h.Device, h.Port)
		if why != "" {
			s += " (" + why + ")"
		}
	} else {
		s += ", no RDMA device"
	}
	if h.Netdev != "" {
		s += ", netdev " + h.Netdev
	}
	return s
}

func writeTable(w io.Writer, fs []result.DoctorFinding) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  check\tstatus\tdetail")
	for _, f := range fs {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", f.Check, strings.ToUpper(f.Status), f.Detail)
		if f.Fix != "" {
			fmt.Fprintf(tw, "  \t\tfix: %s\n", f.Fix)
		}
	}
	tw.Flush()
}
