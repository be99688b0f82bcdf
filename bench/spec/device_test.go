package spec

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// TestCheckDevice: every device limit refuses a spec above it by name, on
// plain data (no device needed); the limits the device lacks wrap
// ErrNotSupported.
func TestCheckDevice(t *testing.T) {
	rxe := DeviceLimits{Name: "rxe0", Port: 1, MaxQPWR: 1 << 14, MaxCQE: 1 << 15, MaxMRSize: 1 << 40, AtomicCap: true,
		MaxMsgSize: 1 << 31, PKeyTableLen: 64, NumCompVectors: 1, MaxSRQ: 1 << 10, MaxSRQWR: 1 << 14}
	base := Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 4096, TxDepth: 128, RxDepth: 512}
	for _, tt := range []struct {
		name    string
		dev     func(*DeviceLimits)
		spec    func(*Spec)
		mr      int
		want    string // "" = accepted
		lacking bool   // wraps ErrNotSupported
	}{
		{"fits", nil, nil, 8192, "", false},
		{"tx depth", func(d *DeviceLimits) { d.MaxQPWR = 64 }, nil, 8192, "tx depth 128 is above rxe0's max_qp_wr 64", true},
		{"rx depth", func(d *DeviceLimits) { d.MaxQPWR = 256 }, nil, 8192, "rx depth 512 is above rxe0's max_qp_wr 256", true},
		{"cqe", func(d *DeviceLimits) { d.MaxCQE = 520 }, nil, 8192, "need CQs of 528 entries (the depth + 16), above rxe0's max_cqe 520", true},
		{"mr size", func(d *DeviceLimits) { d.MaxMRSize = 4096 }, nil, 8192, "needs memory regions of 8192 bytes, above rxe0's max_mr_size 4096", true},
		{"mr size unknown", func(d *DeviceLimits) { d.MaxMRSize = 0 }, nil, 8192, "", false},
		{"iwarp uc", func(d *DeviceLimits) { d.IWARP = true }, func(s *Spec) { s.QPType, s.RDMACM = result.QPTypeUC, true }, 8192, "iWARP device: --qp-type uc", true},
		{"iwarp without cm", func(d *DeviceLimits) { d.IWARP = true }, nil, 8192, "without rdma_cm", true},
		{"iwarp with cm", func(d *DeviceLimits) { d.IWARP = true }, func(s *Spec) { s.RDMACM = true }, 8192, "", false},
		{"iwarp write_imm", func(d *DeviceLimits) { d.IWARP = true }, func(s *Spec) { s.Op, s.RDMACM = result.OpWriteImm, true }, 8192,
			"rxe0 is an iWARP device: --op write_imm (with immediate data) not supported by the device: iWARP carries no immediate data", true},
		{"iwarp send_imm without cm", func(d *DeviceLimits) { d.IWARP = true }, func(s *Spec) { s.Op = result.OpSendImm }, 8192,
			"--op send_imm (with immediate data) not supported", true},
		{"roce write_imm", nil, func(s *Spec) { s.Op = result.OpWriteImm }, 8192, "", false},
		{"atomics", func(d *DeviceLimits) { d.AtomicCap = false }, func(s *Spec) { s.Op, s.Size = result.OpFetchAdd, 8 }, 8192, "rxe0: atomics", true},
		{"write without atomics", func(d *DeviceLimits) { d.AtomicCap = false }, nil, 8192, "", false},
		{"max msg", func(d *DeviceLimits) { d.MaxMsgSize = 1024 }, nil, 8192, "size 4096 bytes exceeds rxe0 port 1 max_msg_sz 1024", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, s := rxe, base
			if tt.dev != nil {
				tt.dev(&d)
			}
			if tt.spec != nil {
				tt.spec(&s)
			}
			err := s.CheckDevice(d, tt.mr)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrNotSupported) != tt.lacking {
				t.Fatalf("CheckDevice: %v, want %q (not supported: %v)", err, tt.want, tt.lacking)
			}
		})
	}
	for _, tt := range []struct {
		s    Spec
		d    DeviceLimits
		want string
	}{
		{Spec{PKeyIndex: 64}, rxe, "P_Key index 64 out of range: rxe0 port 1 has 64 P_Key table entries (0..63)"},
		{Spec{PKeyIndex: 63}, rxe, ""},
		{Spec{CompVector: 1}, rxe, "completion vector 1 out of range: rxe0 has 1 (0..0)"},
		{Spec{CompVector: 0}, DeviceLimits{Name: "x"}, ""},
	} {
		if err := tt.s.CheckDeviceChoices(tt.d); (tt.want == "") != (err == nil) || err != nil && err.Error() != tt.want {
			t.Errorf("CheckDeviceChoices(%+v): %v, want %q", tt.s, err, tt.want)
		}
	}
	noSRQ := rxe
	noSRQ.MaxSRQ = 0
	if err := (Spec{RxDepth: 16}).CheckDeviceSRQ(noSRQ); err == nil || !errors.Is(err, ErrNotSupported) {
		t.Errorf("CheckDeviceSRQ without SRQs: %v", err)
	}
	if err := (Spec{RxDepth: 1 << 15}).CheckDeviceSRQ(rxe); err == nil || errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "max_srq_wr 16384") {
		t.Errorf("CheckDeviceSRQ above max_srq_wr: %v", err)
	}
	if err := (Spec{RxDepth: 512}).CheckDeviceSRQ(rxe); err != nil {
		t.Error(err)
	}
}
