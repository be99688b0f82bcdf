package spec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []int
		wantErr string
	}{
		{"single", "2", []int{2}, ""},
		{"list with suffixes", "2,64,4K,1M", []int{2, 64, 4096, 1 << 20}, ""},
		{"range", "2-16", []int{2, 4, 8, 16}, ""},
		{"range to 8M", "1M-8M", []int{1 << 20, 2 << 20, 4 << 20, 8 << 20}, ""},
		{"mixed and deduplicated", "4K,2-8,4096", []int{4096, 2, 4, 8}, ""},
		{"KiB spelling", "4KiB", []int{4096}, ""},
		{"zero", "0", nil, `size "0"`},
		{"negative", "-5", nil, "size"},
		{"garbage", "abc", nil, `size "abc"`},
		{"too large", "2G", nil, "exceeds the limit"},
		{"empty entry", "2,,4", nil, "empty entry"},
		{"reversed range", "8-2", nil, "is above"},
		{"range start not a power of two", "3-8", nil, "not a power of two"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSizes(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSizes(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseSizes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseList(t *testing.T) {
	got, err := ParseList("op", "write, SEND,write", result.Ops)
	if err != nil || !reflect.DeepEqual(got, []string{"write", "send"}) {
		t.Fatalf("ParseList = %v, %v", got, err)
	}
	if got, _ := ParseList("op", "all", result.Ops); !reflect.DeepEqual(got, result.Ops) {
		t.Fatalf("all = %v", got)
	}
	if _, err := ParseList("op", "send,atomic", result.Ops); err == nil || !strings.Contains(err.Error(), `"atomic"`) || !strings.Contains(err.Error(), "valid: send") {
		t.Fatalf("unknown op error = %v", err)
	}
}

func TestPlanDefaults(t *testing.T) {
	specs, err := Plan{Template: Spec{Warmup: -1}}.Specs()
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 6 {
		t.Fatalf("%d default tests, want 6 (send, write, read × lat, bw)", len(specs))
	}
	for _, s := range specs {
		switch s.Mode {
		case result.ModeLat:
			if s.Size != 2 || s.Iters != 10000 || s.TxDepth != 1 || s.Warmup != 100 {
				t.Errorf("latency default %+v", s)
			}
		case result.ModeBW:
			if s.Size != 65536 || s.Iters != 5000 || s.TxDepth != 128 || s.CQMod != 1 || s.Warmup != 128 {
				t.Errorf("bandwidth default %+v", s)
			}
		}
	}
	small, err := Plan{Modes: []string{result.ModeBW}, Sizes: []int{4096}}.Specs()
	if err != nil || small[0].CQMod != 100 {
		t.Fatalf("4 KiB bandwidth CQ moderation = %+v, %v; want 100 (1 only above 8 KiB)", small, err)
	}
	at, err := Plan{Ops: []string{result.OpFetchAdd}, Modes: []string{result.ModeLat}, Sizes: []int{2, 4096}}.Specs()
	if err != nil || len(at) != 1 || at[0].Size != AtomicSize {
		t.Fatalf("atomics plan = %+v, %v; want one 8-byte test", at, err)
	}
	if _, err := (Plan{Template: Spec{Iters: 10, Duration: time.Second}}).Specs(); err == nil {
		t.Fatal("iterations and duration together accepted")
	}
	if _, err := (Plan{Modes: []string{result.ModeBW}, Template: Spec{TxDepth: 4, CQMod: 8}}).Specs(); err == nil || !strings.Contains(err.Error(), "CQ moderation 8") {
		t.Fatalf("cq-mod above tx depth: %v", err)
	}
}

func TestSpecValidate(t *testing.T) {
	ok := Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Iters: 100, TxDepth: 1, CQMod: 1, RxDepth: 16}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mod     func(*Spec)
		wantErr string
	}{
		{"unknown op", func(s *Spec) { s.Op = "flush" }, `op "flush" unknown`},
		{"unknown mode", func(s *Spec) { s.Mode = "x" }, `mode "x" unknown`},
		{"zero size", func(s *Spec) { s.Size = 0 }, "size 0 bytes out of range 1..1073741824"},
		{"atomic size", func(s *Spec) { s.Op = result.OpFetchAdd }, "atomics are 8 bytes"},
		{"no count", func(s *Spec) { s.Iters = 0 }, "exactly one of iterations"},
		{"negative warm-up", func(s *Spec) { s.Warmup = -1 }, "warm-up -1"},
		{"tx depth", func(s *Spec) { s.TxDepth = 0 }, "tx depth 0 out of range 1..32768"},
		{"rx depth", func(s *Spec) { s.RxDepth = 1 << 20 }, "rx depth 1048576 out of range"},
		{"mtu", func(s *Spec) { s.MTU = 1500 }, "MTU 1500 invalid"},
		{"duration", func(s *Spec) { s.Iters, s.Duration = 0, 48*time.Hour }, "duration 48h0m0s out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			tt.mod(&s)
			if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestTimedInterval(t *testing.T) {
	for _, tt := range []struct {
		op, mode, want string
		half           bool
	}{
		{result.OpSend, result.ModeLat, "RTT/2", true},
		{result.OpWrite, result.ModeLat, "RTT/2", true},
		{result.OpRead, result.ModeLat, "full RDMA READ round trip", false},
		{result.OpFetchAdd, result.ModeLat, "full atomic round trip", false},
		{result.OpWrite, result.ModeBW, "first post to last completion", false},
	} {
		s := Spec{Op: tt.op, Mode: tt.mode}
		if !strings.Contains(s.TimedInterval(), tt.want) || s.HalfRTT() != tt.half {
			t.Errorf("%s %s: %q half=%v", tt.op, tt.mode, s.TimedInterval(), s.HalfRTT())
		}
	}
}

// FuzzSpecDecode feeds arbitrary bytes through what the server does with a
// test message: strict JSON decoding, then validation. It must never panic,
// and whatever passes validation must be safe to allocate for.
func FuzzSpecDecode(f *testing.F) {
	for _, s := range []Spec{
		{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Iters: 100, TxDepth: 1, CQMod: 1, RxDepth: 16},
		{Op: result.OpWrite, Mode: result.ModeBW, Size: 65536, Duration: time.Second, TxDepth: 128, CQMod: 100, RxDepth: 512},
	} {
		b, _ := json.Marshal(s)
		f.Add(b)
	}
	f.Add([]byte(`{"op":"read","size_bytes":-1}`))
	f.Add([]byte(`{"op":"send","mode":"lat","size_bytes":99999999999999999999}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c proto.Conn
		var s Spec
		if err := c.Decode(proto.MsgTest, b, &s); err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			return
		}
		if s.Size < 1 || s.Size > MaxSize || s.TxDepth < 1 || s.TxDepth > MaxDepth || s.RxDepth > MaxDepth || s.CQMod > s.TxDepth {
			t.Fatalf("Validate accepted %+v", s)
		}
	})
}

func TestParseCPUs(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{"0", []int{0}, ""},
		{"0,1", []int{0, 1}, ""},
		{"0-3", []int{0, 1, 2, 3}, ""},
		{"4", nil, "CPU 4 out of range 0..3"},
		{"x", nil, `CPU list "x"`},
		{"", nil, `CPU list ""`},
		{"-1", nil, `CPU list "-1"`},
		{"3-1", nil, `CPU list "3-1"`},
		{"9223372036854775806-9223372036854775807", nil, "CPU 9223372036854775807 out of range 0..3 (this machine has 4 CPUs online)"},
		{"0-99999999999999999999", nil, `CPU list "0-99999999999999999999"`},
		{"2-5", nil, "CPU 5 out of range 0..3"},
	}
	for _, tt := range tests {
		got, err := ParseCPUs(tt.in, 4)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseCPUs(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCPUs(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestSpecQPType(t *testing.T) {
	base := Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Iters: 10, TxDepth: 1, CQMod: 1, RxDepth: 16}
	for _, c := range []struct {
		qp, op string
		size   int
		mtu    int
		tcp    bool
		want   string // "" = valid
	}{
		{"", result.OpRead, 2, 0, false, ""},
		{result.QPTypeRC, result.OpCmpSwap, 8, 0, false, ""},
		{result.QPTypeUC, result.OpSend, 2, 0, false, ""},
		{result.QPTypeUC, result.OpWrite, 1 << 20, 0, false, ""},
		{result.QPTypeUC, result.OpRead, 2, 0, false, "op read is not supported on UC QPs"},
		{result.QPTypeUC, result.OpFetchAdd, 8, 0, false, "op fetch_add is not supported on UC QPs"},
		{result.QPTypeUD, result.OpSend, 4096, 0, false, ""},
		{result.QPTypeUD, result.OpWrite, 2, 0, false, "op write is not supported on UD QPs"},
		{result.QPTypeUD, result.OpRead, 2, 0, false, "op read is not supported on UD QPs"},
		{result.QPTypeUD, result.OpSend, 2048, 1024, false, "size 2048 bytes exceeds the path MTU 1024 bytes"},
		{"xrc", result.OpSend, 2, 0, false, `QP type "xrc" unknown`},
		{result.QPTypeUD, result.OpSend, 2, 0, true, "not to the TCP baseline"},
	} {
		s := base
		s.QPType, s.Op, s.Size, s.MTU = c.qp, c.op, c.size, c.mtu
		if c.tcp {
			s.Transport = result.TransportTCP
		}
		err := s.Validate()
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s %s %dB mtu %d: err %v, want %q", c.qp, c.op, c.size, c.mtu, err, c.want)
		}
	}
	specs, err := Plan{Template: Spec{QPType: result.QPTypeUD}}.Specs()
	if err != nil || len(specs) != 2 || specs[0].Op != result.OpSend || specs[1].Op != result.OpSend || specs[0].QPType != result.QPTypeUD {
		t.Errorf("UD default plan: %v %+v, want send lat and send bw", err, specs)
	}
	if l := (Spec{QPType: result.QPTypeUC}).QPTypeLabel(); l != "UC" {
		t.Errorf("label %q", l)
	}
	if l := (Spec{}).QPTypeLabel(); l != "RC" {
		t.Errorf("default label %q", l)
	}
}

func TestSpecValidateRDMACM(t *testing.T) {
	base := Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 4096, Iters: 100, TxDepth: 128, CQMod: 100, RxDepth: 512, RDMACM: true}
	if err := base.Validate(); err != nil {
		t.Fatalf("rdma_cm RC spec: %v", err)
	}
	for _, tc := range []struct {
		name string
		mod  func(*Spec)
		want string
	}{
		{"tcp", func(s *Spec) { s.Transport = result.TransportTCP; s.Op = result.OpSend }, "not to the TCP baseline"},
		{"uc", func(s *Spec) { s.QPType = result.QPTypeUC }, "RC QPs only, not --qp-type uc"},
		{"ud", func(s *Spec) { s.QPType = result.QPTypeUD; s.Op = result.OpSend }, "RC QPs only, not --qp-type ud"},
		{"mtu", func(s *Spec) { s.MTU = 1024 }, "--mtu 1024 with --rdma-cm"},
		{"sl", func(s *Spec) { s.SL = 3 }, "--sl 3 with --rdma-cm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			tc.mod(&s)
			if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want %q", err, tc.want)
			}
		})
	}
}
