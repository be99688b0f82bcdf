//go:build cgo && linux

package verbs

import (
	"fmt"
	"net/netip"
)

// BestGID picks the GID to use on a RoCE or IB port for a control
// connection whose local end is local, in this order:
//
//  1. a GID equal to local;
//  2. a global GID of local's family (IPv4-mapped for an IPv4 address,
//     IPv6 for an IPv6 one; IPv4 when local is not valid, as perftest's
//     default);
//  3. a global IPv4-mapped GID (local is IPv6 and no global IPv6 GID);
//  4. any other global GID;
//  5. a link-local (fe80::/10) GID, only when nothing else exists: it does
//     not route.
//
// Within each step RoCE v2 comes before RoCE v1 (as perftest's default
// RoCE version), then the lower index. An InfiniBand port's GIDs are all
// of type IB (fe80::<GUID> on a default subnet): the first is taken. It
// returns the entry and why it was chosen; ok is false when the table is
// empty.
func BestGID(table []GIDEntry, local netip.Addr) (e GIDEntry, reason string, ok bool) {
	best, bestScore := -1, -1
	for i, g := range table {
		s := gidTier(g, local)*10 + gidTypeRank(g.Type)
		if s > bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		return GIDEntry{}, "", false
	}
	g := table[best]
	fam := "IPv4"
	if local.IsValid() && !local.Unmap().Is4() {
		fam = "IPv6"
	}
	switch bestScore / 10 {
	case tierMatch:
		reason = fmt.Sprintf("%s GID matching the local address %s", g.Type, local.Unmap())
	case tierFamily:
		if local.IsValid() {
			reason = fmt.Sprintf("best %s GID (global scope, %s, the control address's family)", g.Type, family(g.GID))
		} else {
			reason = fmt.Sprintf("best %s GID (global scope, %s)", g.Type, family(g.GID))
		}
	case tierMapped:
		reason = fmt.Sprintf("%s IPv4-mapped GID: no global %s GID for the control address", g.Type, fam)
	case tierGlobal:
		reason = fmt.Sprintf("%s global %s GID: no global %s GID for the control address", g.Type, family(g.GID), fam)
	case tierIB:
		reason = fmt.Sprintf("the port's first GID of type IB (index %d): InfiniBand and iWARP GIDs hold no IP address to match", g.Index)
	default:
		reason = fmt.Sprintf("only link-local %s GIDs are available", g.Type)
	}
	return g, reason, true
}

// The steps of BestGID, best last.
const (
	tierLinkLocal = iota
	tierIB
	tierGlobal
	tierMapped
	tierFamily
	tierMatch
)

// IsLinkLocalOnly reports a link-local (fe80::/10) GID.
func (e GIDEntry) IsLinkLocalOnly() bool { return e.GID.IsLinkLocal() }

func family(g GID) string {
	if _, ok := g.IPv4(); ok {
		return "IPv4-mapped"
	}
	return "IPv6"
}

// gidTier is g's step in BestGID's order for the local address local.
func gidTier(g GIDEntry, local netip.Addr) int {
	if g.Type == GIDTypeIB {
		return tierIB
	}
	if g.GID.IsLinkLocal() {
		return tierLinkLocal
	}
	_, is4 := g.GID.IPv4()
	want4 := true // perftest's default family
	if local.IsValid() {
		l := local.Unmap()
		if a := netip.AddrFrom16(g.GID).Unmap(); a == l {
			return tierMatch
		}
		want4 = l.Is4()
	}
	switch {
	case is4 == want4:
		return tierFamily
	case is4:
		return tierMapped
	}
	return tierGlobal
}

// gidTypeRank orders GID types within a step: RoCE v2 first.
func gidTypeRank(t GIDType) int {
	switch t {
	case GIDTypeRoCEv2:
		return 2
	case GIDTypeRoCEv1:
		return 1
	}
	return 0
}
