package spec

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// wl is a valid READ bandwidth spec with the workload knobs of k applied.
func wl(k func(*Spec)) Spec {
	s := Spec{Op: result.OpRead, Mode: result.ModeBW, Size: 4096}.WithDefaults()
	k(&s)
	return s
}

// TestValidateWorkload: each limit and each combination that cannot
// spread is refused by name, before any work; the valid ones pass
// Validate whole.
func TestValidateWorkload(t *testing.T) {
	for _, tt := range []struct {
		name string
		s    Spec
		want string
	}{
		{"random region", wl(func(s *Spec) { s.Region, s.Access, s.Seed = 1<<30, AccessRandom, 7 }), ""},
		{"write stride", wl(func(s *Spec) { s.Op, s.Region, s.Access, s.Stride = result.OpWrite, 1<<20, AccessStride, 8192 }), ""},
		{"mrs alone", wl(func(s *Spec) { s.MRs = 4096; s.Size = 512 }), ""},
		{"read latency", wl(func(s *Spec) { s.Mode, s.Region = result.ModeLat, 1<<20; *s = s.WithDefaults() }), ""},
		{"sge send", wl(func(s *Spec) { s.Op, s.SGE = result.OpSend, 4 }), ""},
		{"send over local MRs", wl(func(s *Spec) { s.Op, s.MRs, s.Access = result.OpSend, 8, AccessRandom }), ""},
		{"send latency over local MRs", wl(func(s *Spec) { s.Op, s.Mode, s.MRs = result.OpSend, result.ModeLat, 8; *s = s.WithDefaults() }), "ping-pong"},
		{"negative region", wl(func(s *Spec) { s.Region = -1 }), "region -1 bytes"},
		{"region too large", wl(func(s *Spec) { s.Region = MaxRegion + 1 }), "out of range 0..1099511627776"},
		{"mrs too many", wl(func(s *Spec) { s.MRs = MaxMRs + 1 }), "MRs 1048577"},
		{"sge too many", wl(func(s *Spec) { s.SGE = MaxSGE + 1 }), "SGEs 65"},
		{"access unknown", wl(func(s *Spec) { s.Region, s.Access = 1<<20, "zigzag" }), `access "zigzag"`},
		{"stride without pattern", wl(func(s *Spec) { s.Region, s.Stride = 1<<20, 64 }), "stride 64 bytes with access seq"},
		{"seed without random", wl(func(s *Spec) { s.Region, s.Seed = 1<<20, 3 }), "seed 3 with access seq"},
		{"access without region", wl(func(s *Spec) { s.Access = AccessRandom }), "--access random applies with --region or --mrs"},
		{"send region", wl(func(s *Spec) { s.Op, s.Region = result.OpSend, 1<<20 }), "send has no remote address"},
		{"write latency", wl(func(s *Spec) { s.Op, s.Mode, s.Region = result.OpWrite, result.ModeLat, 1<<20; *s = s.WithDefaults() }), "ping-pong"},
		{"per-op", wl(func(s *Spec) { s.Region, s.MRMode = 1<<20, result.MRModePerOp }), "needs --mr-mode pool"},
		{"bidirectional", wl(func(s *Spec) { s.Region, s.Bidirectional = 1<<20, true }), "with -b"},
		{"verify", wl(func(s *Spec) { s.Region, s.Verify = 1<<20, true }), "with --verify"},
		{"region below a message", wl(func(s *Spec) { s.Region = 1024 }), "too small for one 4096-byte message"},
		{"region over MRs too small", wl(func(s *Spec) { s.Region, s.MRs = 16384, 8 }), "2048-byte MRs"},
		{"atomic stride unaligned", wl(func(s *Spec) {
			s.Op, s.Size, s.Region, s.Access, s.Stride = result.OpFetchAdd, 8, 1<<20, AccessStride, 12
		}), "8-byte aligned"},
		{"sge atomics", wl(func(s *Spec) { s.Op, s.Size, s.SGE = result.OpFetchAdd, 8, 2 }), "one scatter/gather entry"},
		{"sge above the size", wl(func(s *Spec) { s.Size, s.SGE = 2, 4 }), "2-byte message cannot be split over 4"},
		{"sge per-op", wl(func(s *Spec) { s.SGE, s.MRMode = 2, result.MRModePerOp }), "--mr-mode per-op"},
		{"idle QPs", wl(func(s *Spec) { s.IdleQPs = 1000 }), ""},
		{"idle QPs negative", wl(func(s *Spec) { s.IdleQPs = -1 }), "idle QPs -1 out of range 0..65536"},
		{"idle QPs too many", wl(func(s *Spec) { s.IdleQPs = MaxIdleQPs + 1 }), "idle QPs 65537"},
		{"idle QPs rdma_cm", wl(func(s *Spec) { s.IdleQPs, s.RDMACM = 4, true }), "with --rdma-cm"},
		{"sge bidirectional", wl(func(s *Spec) { s.SGE, s.Bidirectional = 2, true }), "with -b"},
		{"sge tcp", Spec{Op: result.OpSend, Mode: result.ModeBW, Size: 64, Transport: result.TransportTCP, SGE: 2}.WithDefaults(), "not to the TCP baseline"},
	} {
		err := tt.s.Validate()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestWorkloadLayout: the region's MRs, slots and steps, and what the
// results record.
func TestWorkloadLayout(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		s                    Spec
		region, mrLen, slots int64
		step                 int64
		access               string
		seed                 uint64
	}{
		{"1 GiB random 4 KiB", wl(func(s *Spec) { s.Region, s.Access = 1<<30, AccessRandom }), 1 << 30, 1 << 30, 1 << 18, 4096, "random", DefaultSeed},
		{"4 MRs seq", wl(func(s *Spec) { s.Region, s.MRs = 1<<20, 4 }), 1 << 20, 1 << 18, 64, 4096, "seq", 0},
		{"stride", wl(func(s *Spec) { s.Region, s.Access, s.Stride = 1<<20, AccessStride, 100000 }), 1 << 20, 1 << 20, 11, 100000, "stride", 0},
		{"mrs alone: one slot each", wl(func(s *Spec) { s.Size, s.MRs = 100, 10 }), 1280, 128, 1, 100, "seq", 0},
		{"seeded", wl(func(s *Spec) { s.Region, s.Access, s.Seed = 1<<20, AccessRandom, 99 }), 1 << 20, 1 << 20, 256, 4096, "random", 99},
	} {
		s := tt.s
		if s.RegionLen() != tt.region || s.MRLen() != tt.mrLen || s.Slots() != tt.slots || s.SpreadStep() != tt.step {
			t.Errorf("%s: region %d, MR %d, slots %d, step %d; want %d, %d, %d, %d", tt.name,
				s.RegionLen(), s.MRLen(), s.Slots(), s.SpreadStep(), tt.region, tt.mrLen, tt.slots, tt.step)
		}
		if step, _ := s.AddrStep(); step != 0 {
			t.Errorf("%s: address stepping %d bytes in a spread test", tt.name, step)
		}
		w := s.WorkloadResult()
		if w == nil || w.RegionBytes != tt.region || w.Access != tt.access || w.Seed != tt.seed || w.MRs != s.NumMRs() || w.SGE != 1 {
			t.Errorf("%s: result %+v", tt.name, w)
		}
	}
	if w := wl(func(*Spec) {}).WorkloadResult(); w != nil {
		t.Errorf("no knobs: result %+v, want none", w)
	}
	if w := wl(func(s *Spec) { s.SGE = 3 }).WorkloadResult(); w == nil || w.SGE != 3 || w.RegionBytes != 0 {
		t.Errorf("sge 3: result %+v", w)
	}
	if s := wl(func(s *Spec) { s.Op, s.MRs = result.OpSend, 8 }); !s.LocalOnly() || s.RegionLen() != 0 {
		t.Errorf("send over 8 MRs: local only %v, region %d", s.LocalOnly(), s.RegionLen())
	} else if w := s.WorkloadResult(); w == nil || w.MRs != 8 || w.RegionBytes != 0 || w.Access != AccessSeq {
		t.Errorf("send over 8 MRs: result %+v", w)
	}
	for _, c := range []struct {
		s    Spec
		want string
	}{
		{wl(func(s *Spec) { s.Region, s.MRs, s.IdleQPs = 1<<20, 4, 16 }), " over a 1048576-byte region in 4 MRs + 16 idle QPs"},
		{wl(func(s *Spec) { s.Op, s.MRs = result.OpSend, 8 }), " over 8 local MRs"},
		{wl(func(*Spec) {}), ""},
	} {
		if got := c.s.WorkloadLabel(); got != c.want {
			t.Errorf("label %q, want %q", got, c.want)
		}
	}
	if w := wl(func(s *Spec) { s.IdleQPs = 9 }).WorkloadResult(); w == nil || w.IdleQPs != 9 || w.MRs != 1 {
		t.Errorf("9 idle QPs: result %+v", w)
	}
	if is := wl(func(s *Spec) { s.IdleQPs = 9 }).IdleSpec(); is.Traits().Access != AccessNone || is.Validate() != nil {
		t.Errorf("idle QPs' spec %+v grants remote access or is invalid (%v)", is, is.Validate())
	}
}

func TestParseAccess(t *testing.T) {
	for _, tt := range []struct {
		in     string
		access string
		stride int64
		err    string
	}{
		{"seq", AccessSeq, 0, ""},
		{" Random", AccessRandom, 0, ""},
		{"stride:4K", AccessStride, 4096, ""},
		{"stride:0", "", 0, "stride:N wants"},
		{"stride:", "", 0, "stride:N wants"},
		{"stride", "", 0, "unknown"},
		{"gather", "", 0, "unknown"},
	} {
		a, st, err := ParseAccess(tt.in)
		if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) || a != tt.access || st != tt.stride {
			t.Errorf("ParseAccess(%q) = %q, %d, %v; want %q, %d, %q", tt.in, a, st, err, tt.access, tt.stride, tt.err)
		}
	}
}

// TestCheckDeviceWorkload: the device's max_sge, max_sge_rd, max_mr and
// max_mr_size refuse a spec by name, as not supported.
func TestCheckDeviceWorkload(t *testing.T) {
	d := DeviceLimits{Name: "rxe0", MaxMR: 4096, MaxSGE: 32, MaxSGERd: 8, MaxMRSize: 1 << 30}
	for _, tt := range []struct {
		name string
		s    Spec
		want string
	}{
		{"fits", wl(func(s *Spec) { s.Region, s.MRs, s.SGE = 1<<30, 4, 8 }), ""},
		{"max_sge", wl(func(s *Spec) { s.Op, s.SGE = result.OpWrite, 33 }), "max_sge 32"},
		{"max_sge_rd", wl(func(s *Spec) { s.SGE = 9 }), "max_sge_rd 8"},
		{"write ignores max_sge_rd", wl(func(s *Spec) { s.Op, s.SGE = result.OpWrite, 9 }), ""},
		{"max_mr", wl(func(s *Spec) { s.Size, s.MRs = 64, 4096 }), "max_mr 4096"},
		{"max_mr_size", wl(func(s *Spec) { s.Region = 2 << 30 }), "max_mr_size 1073741824"},
	} {
		err := tt.s.CheckDeviceWorkload(d)
		if (tt.want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrNotSupported))) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
