package mesh

import (
	"fmt"
	"net"
	"net/netip"
)

// ControlAddr is the local address a rank's servers bind to: the one inside
// prefix when prefix is set (--net), else the source address of the default
// route. Binding explicitly (never the wildcard) keeps the servers off other
// networks.
func ControlAddr(prefix netip.Prefix) (netip.Addr, error) {
	if prefix.IsValid() {
		addrs, err := net.InterfaceAddrs()
		if err != nil {
			return netip.Addr{}, fmt.Errorf("mesh: list addresses: %w", err)
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if ok && prefix.Contains(ip.Unmap()) {
				return ip.Unmap(), nil
			}
		}
		return netip.Addr{}, fmt.Errorf("mesh: --net %s: no local address in it", prefix)
	}
	// No packet is sent: connecting a UDP socket only picks the route.
	c, err := net.Dial("udp4", "192.0.2.254:9")
	if err != nil {
		return netip.Addr{}, fmt.Errorf("mesh: no default route to pick the control address by (%v): give --net, e.g. --net 10.0.0.0/8", err)
	}
	defer c.Close()
	ap, err := netip.ParseAddrPort(c.LocalAddr().String())
	if err != nil || ap.Addr().IsLoopback() {
		return netip.Addr{}, fmt.Errorf("mesh: the default route leaves from %v: give --net", c.LocalAddr())
	}
	return ap.Addr().Unmap(), nil
}
