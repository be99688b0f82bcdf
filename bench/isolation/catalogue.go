package isolation

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// The attacker catalogue, after Husky's (NSDI '23) classes. Each attacker
// is a load of the victim's test (spec.Load): extra QPs of the same
// session, on the same device and port, that stream while the victim is
// measured, so it runs in loopback and against a server alike.

// Attacker is one attacker of the catalogue.
type Attacker struct {
	Name        string // the --attackers name, e.g. "bw-hog"
	Class       string // Husky's class
	Description string
	Load        spec.Load
}

// Catalogue is every attacker, in the order they run.
var Catalogue = []Attacker{
	{Name: "bw-hog", Class: "bandwidth hog", Description: "2 QPs streaming 64 KiB RDMA WRITEs, one thread each",
		Load: spec.Load{QPs: 2, Op: result.OpWrite, Size: 64 << 10}},
	{Name: "small-flood", Class: "small-op flood", Description: "4 QPs streaming 8 B RDMA WRITEs, one thread each",
		Load: spec.Load{QPs: 4, Op: result.OpWrite, Size: 8}},
	{Name: "rnr-storm", Class: "RNR storm", Description: "2 QPs streaming 64 B SENDs (16 outstanding) at a receiver that keeps one receive posted on each: receiver-not-ready NAKs, retried forever (rnr_retry 7)",
		Load: spec.Load{QPs: 2, Op: result.OpSend, Size: 64, TxDepth: 16, RNR: true}},
	{Name: "pcie-sizes", Class: "PCIe-unfriendly sizes", Description: "4 QPs streaming RDMA WRITEs of 129 B (QPs 0, 2) and 257 B (QPs 1, 3): one byte past a 128 B and a 256 B boundary",
		Load: spec.Load{QPs: 4, Op: result.OpWrite, Size: 129, AltSize: 257}},
	{Name: "qp-thrash", Class: "QP-context thrash", Description: fmt.Sprintf("%d QPs of 8 B RDMA WRITEs (Husky's 16 processes x 32 QPs), 4 outstanding each, driven round robin from 2 threads", spec.MaxThrashLoadQPs),
		Load: spec.Load{QPs: spec.MaxThrashLoadQPs, Op: result.OpWrite, Size: 8, TxDepth: 4, Threads: 2}},
	{Name: "mr-thrash", Class: "MTT/MPT thrash", Description: fmt.Sprintf("2 QPs streaming 512 B RDMA WRITEs, each to the next of %d MRs of 512 B on the target and from the next of as many on the initiator, round robin: more memory keys and translations in flight than a NIC's cache holds (Husky: 4096 x 512 B MRs)", mrThrashMRs),
		Load: spec.Load{QPs: 2, Op: result.OpWrite, Size: 512, MRs: mrThrashMRs}},
	{Name: "mr-churn", Class: "MR churn", Description: "one thread registering and deregistering a 1 MiB buffer in a loop (ibv_reg_mr, ibv_dereg_mr), no QPs",
		Load: spec.Load{Op: result.OpWrite, Size: 64, ChurnSize: 1 << 20}},
}

// mrThrashMRs is how many MRs the mr-thrash attacker spreads over on
// each side: Husky's 4096 x 512 B.
const mrThrashMRs = 4096

// Names lists the catalogue's names.
func Names() []string {
	out := make([]string, len(Catalogue))
	for i, a := range Catalogue {
		out[i] = a.Name
	}
	return out
}

// Select is the attackers named in list ("a,b"; "" or "all": the whole
// catalogue), in the catalogue's order; an unknown or repeated name is
// an error naming the valid ones.
func Select(list string) ([]Attacker, error) {
	list = strings.TrimSpace(list)
	if list == "" || list == "all" {
		return Catalogue, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if !known(n) {
			return nil, fmt.Errorf("attacker %q unknown; valid: %s (or all)", n, strings.Join(Names(), ", "))
		}
		if want[n] {
			return nil, fmt.Errorf("attacker %q named twice", n)
		}
		want[n] = true
	}
	var out []Attacker
	for _, a := range Catalogue {
		if want[a.Name] {
			out = append(out, a)
		}
	}
	return out, nil
}

func known(name string) bool {
	for _, a := range Catalogue {
		if a.Name == name {
			return true
		}
	}
	return false
}

// loadOf is the attacker's load record in the document, from the load
// that ran (defaults filled).
func loadOf(l spec.Load) result.IsolationLoad {
	threads := l.Threads
	if threads == 0 {
		threads = l.QPs
	}
	return result.IsolationLoad{QPs: l.QPs, Op: l.Op, SizeBytes: l.Size, AltSizeBytes: l.AltSize, TxDepth: l.TxDepth,
		Threads: threads, RNR: l.RNR, ChurnSizeBytes: l.ChurnSize, MRs: l.MRs}
}
