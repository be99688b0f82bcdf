package wire

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// Params is perftest's struct perftest_parameters_negotiate (step 4, peer
// >= 6.28): the test both sides must agree on. The enum fields hold
// perftest's values (see the names in paramFields). Test.Params fills it
// as perftest fills its own.
type Params struct {
	TestMethod        int32 // RUN_REGULAR 0, RUN_ALL 1 (-a), RUN_INFINITELY 2
	ConnectionType    int32 // RC 0, UC 1, UD 2, RawEth 3, XRC 4, DC 5, SRD 6
	Verb              int32 // SEND 0, SEND_IMM 1, WRITE 2, WRITE_IMM 3, READ 4, ATOMIC 5
	Tst               int32 // LAT 0, BW 1, LAT_BY_BW 2, FS_RATE 3
	AtomicType        int32 // CMP_AND_SWAP 0, FETCH_AND_ADD 1
	TestType          int32 // ITERATIONS 0, DURATION 1 (-D)
	ReportFmt         int32 // GBS 0 (--report_gbits), MBS 1
	Size              uint64
	Iters             uint64 // 0 with -D (perftest counts from 0 then)
	AESXTS            int32
	NumQPs            int32
	Duration          int32 // seconds
	RDMACM            int32 // -R
	WriteImm          int32
	NoEnhancedReorder int32
	SigOffload        int32
	DataValidation    int32
	MaxQPRdAtom       int32  // the device's max_qp_rd_atom
	MLX5DVCompMask    uint64 // builds with mlx5dv only (see LegacyLen)
}

// The perftest enum values the drop-in uses.
const (
	RunRegular, RunAll            = 0, 1
	ConnRC, ConnUC, ConnUD        = 0, 1, 2
	VerbSend, VerbWrite, VerbRead = 0, 2, 4
	VerbAtomic                    = 5
	TstLat, TstBW                 = 0, 1
	CmpAndSwap, FetchAndAdd       = 0, 1
	Iterations, DurationTest      = 0, 1
	ReportGbits, ReportMiB        = 0, 1
	DefaultDuration               = 5 // perftest's DEF_DURATION, sent without -D
)

// Test is the test as the drop-in runs it, in the terms perftest's
// parser turns into its parameters.
type Test struct {
	Verb        int32 // VerbSend, VerbWrite, VerbRead, VerbAtomic
	Lat         bool  // a latency tool
	Conn        int32 // ConnRC, ConnUC, ConnUD
	AllSizes    bool  // -a
	Duration    int   // -D seconds; 0: iterations
	ReportGbits bool  // --report_gbits
	RDMACM      bool  // -R
	CmpAndSwap  bool  // -A CMP_AND_SWAP (atomic tools)
	Size        uint64
	Iters       uint64
	NumQPs      int
	MaxQPRdAtom int // this side's device's max_qp_rd_atom
}

// Params returns what perftest >= 6.28 would send for t. perftest sets
// atomicType only in the atomic tools (FETCH_AND_ADD unless -A), so every
// other tool sends 0 (CMP_AND_SWAP); with -D it sends 0 iterations.
func (t Test) Params() Params {
	p := Params{TestMethod: RunRegular, ConnectionType: t.Conn, Verb: t.Verb, Tst: TstBW, AtomicType: CmpAndSwap,
		TestType: Iterations, ReportFmt: ReportMiB, Size: t.Size, Iters: t.Iters, NumQPs: int32(t.NumQPs),
		Duration: DefaultDuration, MaxQPRdAtom: int32(t.MaxQPRdAtom)}
	if t.Lat {
		p.Tst = TstLat
	}
	if t.Verb == VerbAtomic && !t.CmpAndSwap {
		p.AtomicType = FetchAndAdd
	}
	if t.AllSizes {
		p.TestMethod = RunAll
	}
	if t.Duration > 0 {
		p.TestType, p.Duration, p.Iters = DurationTest, int32(t.Duration), 0
	}
	if t.ReportGbits {
		p.ReportFmt = ReportGbits
	}
	if t.RDMACM {
		p.RDMACM = 1
	}
	return p
}

var onOff = []string{"OFF", "ON"}

// paramFields lists the fields in perftest's comparison order.
var paramFields = []struct {
	name  string
	wide  bool // 8 bytes, else 4
	names []string
	i32   func(*Params) *int32
	u64   func(*Params) *uint64
}{
	{name: "test_method", names: []string{"RUN_REGULAR", "RUN_ALL", "RUN_INFINITELY"}, i32: func(p *Params) *int32 { return &p.TestMethod }},
	{name: "connection_type", names: []string{"RC", "UC", "UD", "RawEth", "XRC", "DC", "SRD"}, i32: func(p *Params) *int32 { return &p.ConnectionType }},
	{name: "verb", names: []string{"SEND", "SEND_IMM", "WRITE", "WRITE_IMM", "READ", "ATOMIC"}, i32: func(p *Params) *int32 { return &p.Verb }},
	{name: "tst", names: []string{"LAT", "BW", "LAT_BY_BW", "FS_RATE"}, i32: func(p *Params) *int32 { return &p.Tst }},
	{name: "atomicType", names: []string{"CMP_AND_SWAP", "FETCH_AND_ADD"}, i32: func(p *Params) *int32 { return &p.AtomicType }},
	{name: "test_type", names: []string{"ITERATIONS", "DURATION"}, i32: func(p *Params) *int32 { return &p.TestType }},
	{name: "report_fmt", names: []string{"GBS", "MBS"}, i32: func(p *Params) *int32 { return &p.ReportFmt }},
	{name: "size", wide: true, u64: func(p *Params) *uint64 { return &p.Size }},
	{name: "iters", wide: true, u64: func(p *Params) *uint64 { return &p.Iters }},
	{name: "aes_xts", names: onOff, i32: func(p *Params) *int32 { return &p.AESXTS }},
	{name: "num_of_qps", i32: func(p *Params) *int32 { return &p.NumQPs }},
	{name: "duration", i32: func(p *Params) *int32 { return &p.Duration }},
	{name: "use_rdma_cm", names: onOff, i32: func(p *Params) *int32 { return &p.RDMACM }},
	{name: "use_write_with_imm", names: onOff, i32: func(p *Params) *int32 { return &p.WriteImm }},
	{name: "no_enhanced_reorder", names: onOff, i32: func(p *Params) *int32 { return &p.NoEnhancedReorder }},
	{name: "sig_offload", names: onOff, i32: func(p *Params) *int32 { return &p.SigOffload }},
	{name: "data_validation", names: onOff, i32: func(p *Params) *int32 { return &p.DataValidation }},
	{name: "max_qp_rd_atom", i32: func(p *Params) *int32 { return &p.MaxQPRdAtom }},
	{name: "mlx5dv_comp_mask", wide: true, u64: func(p *Params) *uint64 { return &p.MLX5DVCompMask }},
}

// The 6.28/6.29 record, as laid out by the C compiler on a 64-bit
// little-endian host (x86_64, aarch64): seven int32 at 0..27, padding,
// size at 32, iters at 40, eight int32 at 48..79, a raw struct
// ibv_device_attr (232 bytes) at 80, and, in builds with mlx5dv, a uint64
// comp mask at 312. Every field is big-endian except the device
// attributes, which are the host's raw struct (little-endian);
// max_qp_rd_atom sits at offset 144 in it.
const (
	legacyAttrOff     = 80
	DeviceAttrLen     = 232
	attrMaxQPRdAtom   = 144
	LegacyLen         = 320 // with mlx5dv (the usual x86_64/aarch64 build)
	LegacyLenNoMLX5DV = 312
)

var legacyInt32Off = map[string]int{
	"test_method": 0, "connection_type": 4, "verb": 8, "tst": 12, "atomicType": 16, "test_type": 20, "report_fmt": 24,
	"aes_xts": 48, "num_of_qps": 52, "duration": 56, "use_rdma_cm": 60, "use_write_with_imm": 64,
	"no_enhanced_reorder": 68, "sig_offload": 72, "data_validation": 76,
}

// EncodeLegacy returns the 6.28/6.29 record in n bytes (LegacyLen or
// LegacyLenNoMLX5DV). attr is the raw device attributes to send (nil:
// zeros); p.MaxQPRdAtom overrides its max_qp_rd_atom, and must be at least
// 1: perftest lowers its outstanding reads to the peer's max_qp_rd_atom,
// and with 0 its READ and atomic responder refuses every request
// (IBV_WC_REM_INV_REQ_ERR on the requester).
func (p Params) EncodeLegacy(n int, attr []byte) ([]byte, error) {
	if n != LegacyLen && n != LegacyLenNoMLX5DV {
		return nil, outOfRange("negotiation", "record of %d bytes: want %d or %d", n, LegacyLen, LegacyLenNoMLX5DV)
	}
	if p.MaxQPRdAtom < 1 {
		return nil, outOfRange("negotiation: max_qp_rd_atom", "%d: want at least 1 (the peer would allow 0 outstanding READs and atomics)", p.MaxQPRdAtom)
	}
	b := make([]byte, n)
	for _, f := range paramFields {
		if off, ok := legacyInt32Off[f.name]; ok {
			binary.BigEndian.PutUint32(b[off:], uint32(*f.i32(&p)))
		}
	}
	binary.BigEndian.PutUint64(b[32:], p.Size)
	binary.BigEndian.PutUint64(b[40:], p.Iters)
	copy(b[legacyAttrOff:legacyAttrOff+DeviceAttrLen], attr)
	binary.LittleEndian.PutUint32(b[legacyAttrOff+attrMaxQPRdAtom:], uint32(p.MaxQPRdAtom))
	if n == LegacyLen {
		binary.BigEndian.PutUint64(b[312:], p.MLX5DVCompMask)
	}
	return b, nil
}

// ParseLegacy reads a 6.28/6.29 record (LegacyLen or LegacyLenNoMLX5DV
// bytes) and returns the parameters and the raw device attributes.
func ParseLegacy(b []byte) (Params, []byte, error) {
	if len(b) != LegacyLen && len(b) != LegacyLenNoMLX5DV {
		return Params{}, nil, malformed("negotiation", "record of %d bytes: want %d or %d", len(b), LegacyLen, LegacyLenNoMLX5DV)
	}
	var p Params
	for _, f := range paramFields {
		if off, ok := legacyInt32Off[f.name]; ok {
			*f.i32(&p) = int32(binary.BigEndian.Uint32(b[off:]))
		}
	}
	p.Size = binary.BigEndian.Uint64(b[32:])
	p.Iters = binary.BigEndian.Uint64(b[40:])
	attr := append([]byte(nil), b[legacyAttrOff:legacyAttrOff+DeviceAttrLen]...)
	p.MaxQPRdAtom = int32(binary.LittleEndian.Uint32(attr[attrMaxQPRdAtom:]))
	if len(b) == LegacyLen {
		p.MLX5DVCompMask = binary.BigEndian.Uint64(b[312:])
	}
	return p, attr, nil
}

// Mismatch is a negotiated field whose values differ, worded as perftest
// words it: "size mismatch: local=2, remote=64".
type Mismatch struct {
	Field         string
	Local, Remote string
}

func (m Mismatch) Error() string {
	return fmt.Sprintf("%s mismatch: local=%s, remote=%s", m.Field, m.Local, m.Remote)
}

// Unwrap returns ErrMismatch.
func (m Mismatch) Unwrap() error { return ErrMismatch }

// Compare lists the fields of remote that differ from local, in perftest's
// order. max_qp_rd_atom and mlx5dv_comp_mask are capabilities, not
// settings: they never mismatch (see ClampOutReads).
func Compare(local, remote Params) []Mismatch {
	var out []Mismatch
	for _, f := range paramFields {
		if f.name == "max_qp_rd_atom" || f.name == "mlx5dv_comp_mask" {
			continue
		}
		var l, r string
		if f.wide {
			lv, rv := *f.u64(&local), *f.u64(&remote)
			if lv == rv {
				continue
			}
			l, r = fmt.Sprint(lv), fmt.Sprint(rv)
		} else {
			lv, rv := *f.i32(&local), *f.i32(&remote)
			if lv == rv {
				continue
			}
			l, r = enumName(f.names, lv), enumName(f.names, rv)
		}
		out = append(out, Mismatch{Field: f.name, Local: l, Remote: r})
	}
	return out
}

func enumName(names []string, v int32) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	if names != nil {
		return fmt.Sprintf("%d (unknown)", v)
	}
	return fmt.Sprint(v)
}

// ClampOutReads is perftest's rule for max_qp_rd_atom: a side asking for
// more outstanding reads than the peer's device allows uses the peer's
// maximum.
func ClampOutReads(outReads int, remote Params) int {
	if remote.MaxQPRdAtom > 0 && outReads > int(remote.MaxQPRdAtom) {
		return int(remote.MaxQPRdAtom)
	}
	return outReads
}

// FieldNames lists the negotiated fields, sorted (for docs and tests).
func FieldNames() []string {
	var n []string
	for _, f := range paramFields {
		n = append(n, f.name)
	}
	sort.Strings(n)
	return n
}
