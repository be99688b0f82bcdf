package admit

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ParseAllow parses --allow: a comma-separated list of CIDR prefixes
// (10.0.0.0/8, fd00::/8) or single addresses.
func ParseAllow(v string) ([]netip.Prefix, error) {
	var nets []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("%q is neither a CIDR prefix (10.0.0.0/8) nor an address", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		nets = append(nets, p.Masked())
	}
	if len(nets) == 0 {
		return nil, errors.New("empty list")
	}
	return nets, nil
}

// Allowed reports whether a is in one of nets.
func Allowed(nets []netip.Prefix, a netip.Addr) bool {
	for _, p := range nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
