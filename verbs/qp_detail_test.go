package verbs

import (
	"strings"
	"testing"
)

// TestCreateQPDetail: a refused QP within the device's max_qp_wr names the
// tx depth, inline size, QP type and max_qp_wr and says that the first two
// shrink the usable depth (mlx5's WQE basic blocks), rather than blame
// max_qp_wr; one above the limits names the limits.
func TestCreateQPDetail(t *testing.T) {
	da := &DeviceAttr{MaxQPWR: 16384, MaxSGE: 32}
	for _, tt := range []struct {
		name    string
		cfg     QPConfig
		da      *DeviceAttr
		want    []string
		notWant []string
	}{
		{"within max_qp_wr: UD with inline", QPConfig{Type: QPTypeUD, Caps: QPCaps{MaxSendWR: 16384, MaxRecvWR: 512, MaxInlineData: 188}}, da,
			[]string{"UD, send_wr 16384, recv_wr 512, inline 188", "tx depth (send_wr 16384) is within max_qp_wr 16384",
				"inline size (188 bytes) and the QP type (UD) shrink the usable send queue depth on this device", "lower the tx depth or the inline size"},
			[]string{"device limits"}},
		{"within max_qp_wr: RC", QPConfig{Type: QPTypeRC, Caps: QPCaps{MaxSendWR: 4096, MaxRecvWR: 1, MaxInlineData: 220}}, da,
			[]string{"tx depth (send_wr 4096) is within max_qp_wr 16384", "(220 bytes)", "QP type (RC)"}, []string{"device limits"}},
		{"send above max_qp_wr", QPConfig{Type: QPTypeRC, Caps: QPCaps{MaxSendWR: 20000}}, da,
			[]string{"device limits: max_qp_wr 16384, max_sge 32"}, []string{"shrink"}},
		{"recv above max_qp_wr", QPConfig{Type: QPTypeRC, Caps: QPCaps{MaxSendWR: 10, MaxRecvWR: 20000}}, da,
			[]string{"device limits: max_qp_wr 16384"}, []string{"shrink"}},
		{"device unknown", QPConfig{Type: QPTypeUC, Caps: QPCaps{MaxSendWR: 10}}, nil,
			[]string{"UC, send_wr 10, recv_wr 0, inline 0"}, []string{"shrink", "device limits"}},
	} {
		got := createQPDetail(tt.cfg, tt.da)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tt.name, got, w)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q has %q", tt.name, got, w)
			}
		}
	}
}
