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
// read and, under it, the fix; then the counts of each status. why says
// why this host's device was chosen ("" to leave it out).
func WriteReport(w io.Writer, doc *result.DoctorDocument, why string) error {
	var local, both []result.DoctorFinding
	for _, f := range doc.Findings {
		if strings.HasPrefix(f.Check, "peer-") {
			both = append(both, f)
		} else {
			local = append(local, f)
		}
	}
	fmt.Fprintf(w, "This host: %s\n", describe(doc.Local, why))
	writeTable(w, local)
	if doc.Peer != nil {
		fmt.Fprintf(w, "\nServer %s: %s\n", doc.PeerAddress, describe(*doc.Peer, ""))
		writeTable(w, doc.PeerFindings)
		fmt.Fprintf(w, "\nBoth ends:\n")
		writeTable(w, both)
	}
	n := map[string]int{}
	for _, f := range append(doc.Findings, doc.PeerFindings...) {
		n[f.Status]++
	}
	_, err := fmt.Fprintf(w, "\nStatus: %s (%d fail, %d warn, %d unknown, %d pass)\n", strings.ToUpper(result.DoctorWorst(doc.Findings, doc.PeerFindings)),
		n[result.DoctorFail], n[result.DoctorWarn], n[result.DoctorUnknown], n[result.DoctorPass])
	return err
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
