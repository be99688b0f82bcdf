package testutil

import (
	"net/netip"
	"testing"

	"github.com/rdmabench/rdmabench/verbs"
)

// CMAddress finds a device with an IP address rdma_cm can use (neither
// loopback nor link-local: rdma_cm resolves no loopback address) and
// returns the address and librdmacm's context of its device, closed when
// the test ends. In the SoftRoCE guest that is rxe1 on dummy0. Without one
// it skips, or fails when RDMABENCH_REQUIRE_RDMA=1.
func CMAddress(tb testing.TB) (netip.Addr, *verbs.Context) {
	tb.Helper()
	RequireRDMA(tb)
	names, err := verbs.DeviceNames()
	if err != nil {
		tb.Fatal(err)
	}
	for _, name := range names {
		ctx, err := verbs.OpenCM(name)
		if err != nil {
			tb.Fatalf("OpenCM(%s): %v", name, err)
		}
		tbl, err := ctx.GIDTable(Port)
		if err != nil {
			tb.Fatalf("%s GID table: %v", name, err)
		}
		for _, g := range tbl {
			a := netip.AddrFrom16(g.GID).Unmap()
			if a.Is4() && !a.IsLoopback() && !a.IsLinkLocalUnicast() {
				CloseAtEnd(tb, name+" (leak?)", ctx)
				return a, ctx
			}
		}
		ctx.Close()
	}
	if Required() {
		tb.Fatalf("%s=1 but no RDMA device has a non-loopback IPv4 address for rdma_cm (devices: %v)", RequireEnv, names)
	}
	tb.Skipf("no RDMA device has a non-loopback IPv4 address for rdma_cm (devices: %v)", names)
	return netip.Addr{}, nil
}
