package device

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

func TestPerftestInline(t *testing.T) {
	rxe := verbs.DeviceAttr{VendorID: 0xffffff, VendorPartID: 0}
	cx5 := verbs.DeviceAttr{VendorID: 0x02c9, VendorPartID: 4119}
	bnxt := verbs.DeviceAttr{VendorID: 0x14e4, VendorPartID: 5969} // N2100G: missing from perftest's list (its #223)
	thor := verbs.DeviceAttr{VendorID: 0x14e4, VendorPartID: 5984}
	e810 := verbs.DeviceAttr{VendorID: 0x8086, VendorPartID: 5522}
	tests := []struct {
		name string
		s    spec.Spec
		attr verbs.DeviceAttr
		want int
		why  string
	}{
		{"rxe unknown", spec.Spec{Op: "send", Mode: "lat"}, rxe, 0, "does not recognise (vendor_id 0xffffff, vendor_part_id 0)"},
		{"cx5 send rc", spec.Spec{Op: "send", Mode: "lat"}, cx5, 236, "latency value for send on RC"},
		{"cx5 send ud", spec.Spec{Op: "send", Mode: "lat", QPType: "ud"}, cx5, 188, "on UD"},
		{"cx5 write", spec.Spec{Op: "write", Mode: "lat"}, cx5, 220, "write"},
		{"cx5 read", spec.Spec{Op: "read", Mode: "lat"}, cx5, 0, "nothing inline for read"},
		{"cx5 bw", spec.Spec{Op: "send", Mode: "bw"}, cx5, 0, "bandwidth"},
		{"broadcom override", spec.Spec{Op: "send", Mode: "lat"}, thor, 96, "Broadcom NetXtreme"},
		{"broadcom missing", spec.Spec{Op: "send", Mode: "lat"}, bnxt, 0, "does not recognise"},
		{"intel gen2", spec.Spec{Op: "write", Mode: "lat"}, e810, 101, "Intel gen2"},
	}
	for _, tc := range tests {
		n, why := perftestInline(tc.s, tc.attr)
		if n != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%s: %d %q, want %d and %q", tc.name, n, why, tc.want, tc.why)
		}
	}
}
