package verbs

import (
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"syscall"
	"testing"
)

func TestErrorUnwrap(t *testing.T) {
	err := error(&Error{Op: "ibv_reg_mr", Detail: "4096 bytes", Err: syscall.ENOMEM})
	if !errors.Is(err, syscall.ENOMEM) {
		t.Fatalf("errors.Is(%v, ENOMEM) = false", err)
	}
	if got, want := err.Error(), "ibv_reg_mr (4096 bytes): cannot allocate memory"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if newError("x", nil) != nil {
		t.Fatal("newError(nil) must be nil")
	}
}

func TestWCError(t *testing.T) {
	tests := []struct {
		name   string
		status WCStatus
		want   string
	}{
		{"remote access", WCRemAccessErr, "IBV_WC_REM_ACCESS_ERR"},
		{"retry exceeded", WCRetryExcErr, "IBV_WC_RETRY_EXC_ERR"},
		{"rnr", WCRNRRetryExcErr, "IBV_WC_RNR_RETRY_EXC_ERR"},
		{"general", WCGeneralErr, "IBV_WC_GENERAL_ERR"},
		{"unknown", WCStatus(99), "IBV_WC_STATUS(99)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := error(&WCError{Status: tt.status, Opcode: OpWrite, WRID: 7, QPN: 0x11})
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "qpn 0x11") {
				t.Fatalf("Error() = %q, want it to name %s and the QPN", err, tt.want)
			}
			var wce *WCError
			if !errors.As(err, &wce) || wce.Status != tt.status {
				t.Fatalf("errors.As failed for %v", err)
			}
			if !errors.Is(err, &WCError{Status: tt.status}) || errors.Is(err, &WCError{Status: WCFatalErr}) {
				t.Fatalf("errors.Is on status is wrong for %v", err)
			}
		})
	}
}

func TestMTU(t *testing.T) {
	for e, b := range map[int]int{1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096} {
		if MTUBytes(e) != b {
			t.Errorf("MTUBytes(%d) = %d, want %d", e, MTUBytes(e), b)
		}
		if got, err := MTUEnum(b); err != nil || got != e {
			t.Errorf("MTUEnum(%d) = %d, %v", b, got, err)
		}
	}
	if _, err := MTUEnum(1500); err == nil || !strings.Contains(err.Error(), "1500") {
		t.Errorf("MTUEnum(1500) error = %v, want one naming 1500", err)
	}
}

func TestGIDText(t *testing.T) {
	var g GID
	if err := g.UnmarshalText([]byte("::ffff:127.0.0.1")); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(g)
	if string(b) != `"::ffff:127.0.0.1"` {
		t.Fatalf("json = %s", b)
	}
	if v4, ok := g.IPv4(); !ok || v4.String() != "127.0.0.1" {
		t.Fatalf("IPv4() = %v, %v", v4, ok)
	}
	if err := g.UnmarshalText([]byte("zz")); err == nil {
		t.Fatal("bad GID accepted")
	}
}

func mustGID(s string) GID { return netip.MustParseAddr(s).As16() }

func TestBestGID(t *testing.T) {
	rxeLo := []GIDEntry{
		{Index: 0, GID: mustGID("fe80::200:ff:fe00:0"), Type: GIDTypeRoCEv2, Netdev: "lo"},
		{Index: 1, GID: mustGID("::ffff:127.0.0.1"), Type: GIDTypeRoCEv2, Netdev: "lo"},
	}
	mixed := []GIDEntry{
		{Index: 0, GID: mustGID("fe80::1"), Type: GIDTypeRoCEv1},
		{Index: 1, GID: mustGID("fe80::1"), Type: GIDTypeRoCEv2},
		{Index: 2, GID: mustGID("::ffff:10.0.0.5"), Type: GIDTypeRoCEv1},
		{Index: 3, GID: mustGID("::ffff:10.0.0.5"), Type: GIDTypeRoCEv2},
		{Index: 4, GID: mustGID("::ffff:10.0.0.6"), Type: GIDTypeRoCEv2},
		{Index: 5, GID: mustGID("2001:db8::5"), Type: GIDTypeRoCEv2},
	}
	dual := []GIDEntry{ // a RoCE port with an IPv4 address and IPv6 link-local only
		{Index: 0, GID: mustGID("fe80::5054:ff:fe12:3456"), Type: GIDTypeRoCEv1, Netdev: "eth0"},
		{Index: 1, GID: mustGID("fe80::5054:ff:fe12:3456"), Type: GIDTypeRoCEv2, Netdev: "eth0"},
		{Index: 2, GID: mustGID("::ffff:192.0.2.1"), Type: GIDTypeRoCEv1, Netdev: "eth0"},
		{Index: 3, GID: mustGID("::ffff:192.0.2.1"), Type: GIDTypeRoCEv2, Netdev: "eth0"},
	}
	vlan := append(dual[:4:4],
		GIDEntry{Index: 4, GID: mustGID("::ffff:198.51.100.1"), Type: GIDTypeRoCEv1, Netdev: "eth0.10"},
		GIDEntry{Index: 5, GID: mustGID("::ffff:198.51.100.1"), Type: GIDTypeRoCEv2, Netdev: "eth0.10"})
	ibTable := []GIDEntry{
		{Index: 0, GID: mustGID("fe80::248a:703:b1:bc04"), Type: GIDTypeIB},
		{Index: 1, GID: mustGID("fec0::248a:703:b1:bc04"), Type: GIDTypeIB},
	}
	tests := []struct {
		name  string
		table []GIDEntry
		local string
		want  int
	}{
		{"rxe on lo picks the IPv4-mapped GID", rxeLo, "127.0.0.1", 1},
		{"rxe on lo without a local address", rxeLo, "", 1},
		{"matching address wins", mixed, "10.0.0.6", 4},
		{"v2 over v1 for the same address", mixed, "10.0.0.5", 3},
		{"IPv6 control connection", mixed, "2001:db8::5", 5},
		{"link-local only", rxeLo[:1], "127.0.0.1", 0},
		{"IB", []GIDEntry{{Index: 0, GID: mustGID("fe80::2"), Type: GIDTypeIB}}, "", 0},
		// IPoIB: the control address is on ib0, the table holds no IP
		{"IB with an IPv4 control address", ibTable, "192.0.2.7", 0},
		{"IB with an IPv6 control address", ibTable, "2001:db8::7", 0},
		// an IPv6 control address whose GID is not in the table: a global
		// IPv4-mapped GID, never a link-local one (it does not route)
		{"IPv6 control: IPv4-mapped over link-local", dual, "2001:db8::9", 3},
		{"IPv6 control: global IPv6 first", append(dual[:4:4], GIDEntry{Index: 4, GID: mustGID("2001:db8::4"), Type: GIDTypeRoCEv2}), "2001:db8::9", 4},
		{"IPv4 control: IPv6 global over link-local", []GIDEntry{dual[1], {Index: 7, GID: mustGID("2001:db8::4"), Type: GIDTypeRoCEv1}}, "192.0.2.9", 7},
		{"v2 over v1 in the family step", dual, "198.51.100.9", 3},
		{"v1 only", []GIDEntry{dual[0], dual[2]}, "2001:db8::9", 2},
		// a VLAN netdev's GIDs beside the base netdev's: the matching one
		{"VLAN GID", vlan, "198.51.100.1", 5},
		{"VLAN base GID", vlan, "192.0.2.1", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var local netip.Addr
			if tt.local != "" {
				local = netip.MustParseAddr(tt.local)
			}
			got, reason, ok := BestGID(tt.table, local)
			if !ok || got.Index != tt.want || reason == "" {
				t.Fatalf("BestGID = index %d (%q), ok %v; want index %d", got.Index, reason, ok, tt.want)
			}
		})
	}
	if _, reason, _ := BestGID(dual, netip.MustParseAddr("2001:db8::9")); !strings.Contains(reason, "IPv4-mapped GID: no global IPv6 GID") {
		t.Errorf("IPv6 control, IPv4-mapped GID: reason %q", reason)
	}
	if _, reason, _ := BestGID(dual[:2], netip.MustParseAddr("2001:db8::9")); !strings.Contains(reason, "only link-local") {
		t.Errorf("link-local only: reason %q", reason)
	}
	if _, _, ok := BestGID(nil, netip.Addr{}); ok {
		t.Fatal("BestGID(nil) ok")
	}
}

func TestCheckMemlock(t *testing.T) {
	tests := []struct {
		name            string
		limit, need     uint64
		capable, wantOK bool
	}{
		{"under", 1 << 20, 4096, false, true},
		{"equal", 8192, 8192, false, true},
		{"over", 65536, 1 << 20, false, false},
		{"over but CAP_IPC_LOCK", 65536, 1 << 20, true, true},
		{"unlimited", ^uint64(0), 1 << 40, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkMemlock(tt.limit, tt.need, tt.capable)
			if (err == nil) != tt.wantOK {
				t.Fatalf("checkMemlock = %v, want ok=%v", err, tt.wantOK)
			}
			var me *MemlockError
			if err != nil && (!errors.As(err, &me) || !strings.Contains(err.Error(), "65536 bytes") || !strings.Contains(err.Error(), "1048576 bytes")) {
				t.Fatalf("error %q must name current and needed values", err)
			}
		})
	}
}

func TestDeviceNotFoundError(t *testing.T) {
	err := &DeviceNotFoundError{Name: "mlx9", Available: []string{"rxe0", "siw0"}}
	if got := err.Error(); got != `device "mlx9" not found; available: rxe0, siw0` {
		t.Fatalf("Error() = %q", got)
	}
}

// TestDiscoveryErrorsAreTyped runs anywhere: without RDMA the error is one of
// the documented sentinels and carries the SoftRoCE hint.
func TestDiscoveryErrorsAreTyped(t *testing.T) {
	names, err := DeviceNames()
	if err == nil {
		if len(names) == 0 {
			t.Fatal("DeviceNames returned no names and no error")
		}
		return
	}
	if !errors.Is(err, ErrNoKernelSupport) && !errors.Is(err, ErrNoDevices) && !errors.Is(err, ErrNoProvider) {
		t.Fatalf("untyped discovery error: %v", err)
	}
	if errors.Is(err, ErrNoKernelSupport) && (!strings.Contains(err.Error(), "modprobe rdma_rxe") ||
		!strings.Contains(err.Error(), "rdma-core") || strings.Contains(err.Error(), "scripts/")) {
		t.Fatalf("no SoftRoCE hint, or one naming a file of the source tree, in %q", err)
	}
	if _, err2 := Open("rxe0"); err2 == nil {
		t.Fatal("Open succeeded without devices")
	}
}

// TestWCOpcode: every completion opcode maps onto the work request
// vocabulary, receives with Recv set (ibv_wc_opcode values are ABI).
func TestWCOpcode(t *testing.T) {
	const recv = 1 << 7 // IBV_WC_RECV
	tests := []struct {
		wc       uint32
		imm      bool
		want     Opcode
		wantRecv bool
	}{
		{0, false, OpSend, false},     // IBV_WC_SEND
		{1, false, OpWrite, false},    // IBV_WC_RDMA_WRITE
		{2, false, OpRead, false},     // IBV_WC_RDMA_READ
		{3, false, OpCmpSwap, false},  // IBV_WC_COMP_SWAP
		{4, false, OpFetchAdd, false}, // IBV_WC_FETCH_ADD
		{5, false, OpUnknown, false},  // IBV_WC_BIND_MW
		{recv, false, OpSend, true},
		{recv, true, OpSendWithImm, true},
		{recv + 1, true, OpWriteWithImm, true}, // IBV_WC_RECV_RDMA_WITH_IMM
		{recv + 9, false, OpUnknown, true},
	}
	for _, tt := range tests {
		if op, r := wcOpcode(tt.wc, tt.imm); op != tt.want || r != tt.wantRecv {
			t.Errorf("wcOpcode(%d, imm %v) = %s, recv %v; want %s, %v", tt.wc, tt.imm, op, r, tt.want, tt.wantRecv)
		}
	}
	if OpUnknown.String() != "unknown" || OpFetchAdd.String() != "ATOMIC_FETCH_AND_ADD" {
		t.Errorf("Opcode names: %s, %s", OpUnknown, OpFetchAdd)
	}
}

// TestNewEngineOp: the engine takes the operations its C loops post and
// refuses the others before touching the QP.
func TestNewEngineOp(t *testing.T) {
	for _, op := range []Opcode{OpUnknown, Opcode(42)} {
		_, err := NewEngine(EngineConfig{QP: &QP{}, MR: &MR{length: 64}, Op: op, Size: 8, TxDepth: 1, CQMod: 1, RxDepth: 1, Samples: 16})
		if err == nil || !strings.Contains(err.Error(), "does not measure") {
			t.Errorf("NewEngine(op %s) = %v, want a refusal", op, err)
		}
	}
	for _, op := range []Opcode{OpSend, OpSendWithImm, OpWrite, OpWriteWithImm, OpRead, OpFetchAdd, OpCmpSwap} {
		if !engineOp(op) {
			t.Errorf("engineOp(%s) = false", op)
		}
	}
	for op, want := range map[Opcode]bool{OpSend: true, OpSendWithImm: true, OpWriteWithImm: true, OpWrite: false, OpRead: false, OpFetchAdd: false} {
		if consumesRecv(op) != want {
			t.Errorf("consumesRecv(%s) = %v, want %v", op, !want, want)
		}
	}
}
