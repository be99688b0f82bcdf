package endpoint

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/bench/spec"
)

func TestSpecNeed(t *testing.T) {
	bw := func(op string, size, qps int) spec.Spec {
		return spec.Spec{Op: op, Mode: result.ModeBW, Size: size, Iters: 100, TxDepth: 128, CQMod: 1, RxDepth: 512, QPs: qps}
	}
	eng := func(n, tx int64) int64 { return n * (int64(SampleCap())*8 + tx*8 + 1024) }
	perOp := bw(result.OpWrite, 4096, 2)
	perOp.MRMode = result.MRModePerOp
	load := spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Iters: 100, TxDepth: 1, CQMod: 1, RxDepth: 512,
		Load: &spec.Load{QPs: 2, Op: result.OpWrite, Size: 65536, TxDepth: 128, CQMod: 1}}
	huge := bw(result.OpWrite, 4096, 1)
	huge.HugePages = true
	tcp := bw(result.OpSend, 1<<20, 0)
	tcp.Transport = result.TransportTCP
	for _, c := range []struct {
		name   string
		s      spec.Spec
		client bool
		want   Need
	}{
		{"16 x 256 MiB write bw (the bomb)", bw(result.OpWrite, 256<<20, 16), false, Need{Registered: 8 << 30, Engine: eng(16, 128), QPs: 16}},
		{"one 1 GiB buffer pair", bw(result.OpSend, 1<<30, 1), true, Need{Registered: 2 << 30, Engine: eng(1, 128), QPs: 1}},
		{"per-op client", perOp, true, Need{Registered: 2 * 8192, Unregister: 2 * 8192, Engine: eng(2, 128), QPs: 2}},
		{"per-op server: pooled", perOp, false, Need{Registered: 2 * 8192, Engine: eng(2, 128), QPs: 2}},
		{"load QPs", load, false, Need{Registered: 8192 + 2*2*65536, Engine: eng(1, 1) + eng(2, 128), QPs: 3}},
		{"huge pages", huge, true, Need{Registered: 2 << 20, Engine: eng(1, 128), QPs: 1}},
		{"tcp", tcp, false, Need{Unregister: 1<<20 + 256<<10, Engine: eng(1, 0)}},
	} {
		if got := NeedOf(c.s, c.client); got != c.want {
			t.Errorf("%s: Need = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestCheckNeed(t *testing.T) {
	n := Need{Registered: 8 << 30, Engine: 8 << 20, QPs: 16}
	b := Budget{MaxMemory: 512 << 20, MaxQPs: 128}
	for _, c := range []struct {
		name      string
		n         Need
		b         Budget
		inUse     int64
		qps       int
		avail     int64
		want      string // "" passes
		wantInErr []string
	}{
		{"the bomb", n, b, 0, 0, -1, "write bw 16 QPs x 256 MiB needs 8.0 GiB of memory (8 GiB registered, 8 MiB other buffers) on the server; its --max-memory is 512 MiB", nil},
		{"QPs", Need{QPs: 16}, Budget{MaxMemory: 1 << 30, MaxQPs: 8}, 0, 0, -1, "needs 16 QPs on the server; its --max-qps is 8", nil},
		{"QPs in use", Need{QPs: 4}, Budget{MaxMemory: 1 << 30, MaxQPs: 8}, 0, 6, -1, "its --max-qps is 8, 6 of them in use", nil},
		{"memory in use", Need{Registered: 300 << 20}, b, 300 << 20, 0, -1, "its --max-memory is 512 MiB, 300 MiB of it in use", nil},
		{"MemAvailable", Need{Registered: 300 << 20}, b, 0, 0, 100 << 20, "only 100 MiB is available (MemAvailable", nil},
		{"fits", Need{Registered: 300 << 20, QPs: 2}, b, 0, 0, 1 << 30, "", nil},
	} {
		err := checkNeed("write bw 16 QPs x 256 MiB", "on the server", "its --max", c.n, c.b, c.inUse, c.qps, c.avail)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrOverBudget) || !IsOverBudget(err) {
			t.Errorf("%s: %v, want ErrOverBudget with %q", c.name, err, c.want)
		}
	}
}

func TestDefaultBudget(t *testing.T) {
	for _, c := range []struct {
		memTotal int64
		memlock  uint64
		want     int64
		why      string
	}{
		{2 << 30, unix.RLIM_INFINITY, 1 << 30, "default: half of MemTotal 2 GiB"},
		{2 << 30, 64 << 20, 64 << 20, "default: RLIMIT_MEMLOCK 64 MiB"},
		{2 << 30, 4 << 30, 1 << 30, "default: half of MemTotal 2 GiB"},
		{0, unix.RLIM_INFINITY, 1 << 30, "default: MemTotal unknown"},
	} {
		b := defaultBudget(c.memTotal, c.memlock)
		if b.MaxMemory != c.want || b.Why != c.why || b.MaxQPs != spec.DefaultMaxQPs {
			t.Errorf("defaultBudget(%d, %d) = %+v, want %d (%s)", c.memTotal, c.memlock, b, c.want, c.why)
		}
	}
	if s := (Budget{MaxMemory: 512 << 20, MaxQPs: 8}).String(); s != "--max-memory 512 MiB, --max-qps 8" {
		t.Errorf("String = %q", s)
	}
}

func TestParseMemory(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"512M", 512 << 20, false}, {"8G", 8 << 30, false}, {"1T", 1 << 40, false}, {"4096", 4096, false}, {"2GiB", 2 << 30, false},
		{"0", 0, true}, {"-1", 0, true}, {"NaN", 0, true}, {"1.5G", 0, true}, {"9999999999999T", 0, true}, {"", 0, true}, {"2P", 0, true},
	} {
		got, err := ParseMemory(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for in, want := range map[int64]string{2: "2 B", 4096: "4 KiB", 512 << 20: "512 MiB", 8 << 30: "8 GiB", 3 << 29: "1.5 GiB", 1 << 40: "1 TiB"} {
		if got := FormatBytes(in); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestRateLimits(t *testing.T) {
	base := spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Iters: 10, TxDepth: 1, CQMod: 1, RxDepth: 16}
	nan := math.NaN()
	for _, r := range []float64{nan, 0.001, 0.999, -1, 1e9, math.Inf(1), math.Inf(-1)} {
		s := base
		s.Rate = r
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "out of range 1..") {
			t.Errorf("rate %g: %v, want out of range 1..", r, err)
		}
	}
	for _, r := range []float64{0, 1, 2000, spec.MaxRate} {
		s := base
		s.Rate = r
		if err := s.Validate(); err != nil {
			t.Errorf("rate %g: %v", r, err)
		}
	}
}

// TestLoadMRsNeed: a load spreading over MRs (mr-thrash) counts its MRs in
// the budget, on the target (4096 x 512 B) and on the initiator (as many
// 512 B buffers).
func TestLoadMRsNeed(t *testing.T) {
	s := spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Iters: 100, TxDepth: 1, CQMod: 1, RxDepth: 512,
		Load: &spec.Load{QPs: 2, Op: result.OpWrite, Size: 512, TxDepth: 16, CQMod: 1}}
	thrash := s
	thrash.Load = &spec.Load{QPs: 2, Op: result.OpWrite, Size: 512, TxDepth: 16, CQMod: 1, MRs: 4096}
	for _, client := range []bool{false, true} {
		plain, n := NeedOf(s, client), NeedOf(thrash, client)
		if n.Registered-plain.Registered != 4096*512 || n.QPs != plain.QPs || n.Engine != plain.Engine {
			t.Errorf("client %v: need %+v, without the MRs %+v", client, n, plain)
		}
	}
}
