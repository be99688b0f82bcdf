//go:build cgo && linux

package verbs

import (
	"fmt"
	"net/netip"
)

// BestGID picks the GID to use on a RoCE or IB port: a RoCE v2 IPv4-mapped
// GID equal to local (the address of the control connection) first, then any
// RoCE v2 GID of local's family that is not link-local, then RoCE v1 ones,
// then IB, and link-local GIDs last. It returns the entry and why it was
// chosen. ok is false when the table is empty.
func BestGID(table []GIDEntry, local netip.Addr) (e GIDEntry, reason string, ok bool) {
	best, bestScore := -1, -1
	for i, g := range table {
		s := gidScore(g, local)
		if s > bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		return GIDEntry{}, "", false
	}
	g := table[best]
	switch {
	case bestScore >= 1000:
		reason = fmt.Sprintf("%s GID matching the local address %s", g.Type, local.Unmap())
	case g.IsLinkLocalOnly():
		reason = fmt.Sprintf("only link-local %s GIDs are available", g.Type)
	default:
		reason = fmt.Sprintf("best %s GID (global scope, %s)", g.Type, family(g.GID))
	}
	return g, reason, true
}

// IsLinkLocalOnly reports a link-local (fe80::/10) GID.
func (e GIDEntry) IsLinkLocalOnly() bool { return e.GID.IsLinkLocal() }

func family(g GID) string {
	if _, ok := g.IPv4(); ok {
		return "IPv4-mapped"
	}
	return "IPv6"
}

func gidScore(g GIDEntry, local netip.Addr) int {
	s := 0
	switch g.Type {
	case GIDTypeRoCEv2:
		s += 3
	case GIDTypeRoCEv1:
		s += 2
	case GIDTypeIB:
		s += 1
	}
	if !g.GID.IsLinkLocal() {
		s += 10
	}
	if local.IsValid() {
		l := local.Unmap()
		v4, is4 := g.GID.IPv4()
		if is4 == l.Is4() {
			s += 100
		}
		if (is4 && v4 == l) || (!is4 && netip.AddrFrom16(g.GID) == l) {
			s += 1000
		}
	} else if _, is4 := g.GID.IPv4(); is4 {
		s += 100
	}
	return s
}
