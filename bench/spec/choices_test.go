package spec

import (
	"strings"
	"testing"
)

// TestValidateChoices: each limit is refused by name.
func TestValidateChoices(t *testing.T) {
	for _, tt := range []struct {
		s    Spec
		want string
	}{
		{Spec{AddrCycle: 3000}, "address cycle 3000"},
		{Spec{AddrCycle: 64}, "address cycle 64"},
		{Spec{AddrCycle: 2 << 20}, "address cycle 2097152"},
		{Spec{PKeyIndex: -1}, "P_Key index -1"},
		{Spec{PKeyIndex: 1 << 16}, "P_Key index 65536"},
		{Spec{PKeyIndex: 1, RDMACM: true}, "rdma_cm chooses"},
		{Spec{CompVector: -1}, "completion vector -1"},
		{Spec{CompVector: 2, CompVectorSpread: true}, "contradict"},
		{Spec{AddrCycle: 4096, PKeyIndex: 3, CompVector: 1}, ""},
	} {
		err := tt.s.validateChoices()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.s, err, tt.want)
		}
	}
}
