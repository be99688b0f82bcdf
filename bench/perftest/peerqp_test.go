package perftest

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestPeerQPType: UC with SEND and WRITE and UD with SEND run against
// perftest, as perftest allows them; the rest is named.
func TestPeerQPType(t *testing.T) {
	for _, tc := range []struct {
		qp, op string
		cm     bool
		want   string
	}{
		{"", result.OpRead, true, ""},
		{"uc", result.OpWrite, false, ""},
		{"uc", result.OpSend, false, ""},
		{"ud", result.OpSend, false, ""},
		{"uc", result.OpRead, false, "-c UC with read (UC: SEND and WRITE; UD: SEND)"},
		{"ud", result.OpWrite, false, "-c UD with write"},
		{"ud", result.OpSend, true, "-c UD with -R: rdmabench connects RC QPs only through rdma_cm; perftest 6.06 runs UD with -R"},
		{"uc", result.OpSend, true, `-c UC with -R: perftest refuses it too ("UC is not supported in librdmacm"`},
		{"xrc", result.OpSend, false, "-c XRC (RC, UC and UD)"},
		// with immediate data: rdmabench at both ends only
		{"", result.OpWriteImm, false, "write_imm (--write_with_imm, --send_with_imm): with immediate data the drop-in needs rdmabench at both ends"},
		{"uc", result.OpSendImm, false, "send_imm (--write_with_imm, --send_with_imm)"},
	} {
		if got := PeerQPType(spec.Spec{QPType: tc.qp, Op: tc.op, RDMACM: tc.cm}); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s %s -R=%v: %q, want %q", tc.qp, tc.op, tc.cm, got, tc.want)
		}
	}
}

// TestSpecsImm: --write_with_imm and --send_with_imm make the drop-in's
// tests write_imm and send_imm, in the tool's mode; UD has neither.
func TestSpecsImm(t *testing.T) {
	for _, tc := range []struct {
		tool, args, op, mode string
	}{
		{"ib_write_lat", "--write_with_imm h", result.OpWriteImm, result.ModeLat},
		{"ib_write_bw", "--write_with_imm -c UC h", result.OpWriteImm, result.ModeBW},
		{"ib_send_lat", "--send_with_imm h", result.OpSendImm, result.ModeLat},
		{"ib_send_bw", "--send_with_imm --use-srq h", result.OpSendImm, result.ModeBW},
		{"ib_send_bw", "--send_with_imm -c UD h", "", ""},
	} {
		o, err := Parse(Tools[tc.tool], strings.Fields(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		specs, err := Specs(o)
		if tc.op == "" {
			if err == nil || !strings.Contains(err.Error(), "send_imm") {
				t.Errorf("%s %s: %v, want send_imm refused on UD by name", tc.tool, tc.args, err)
			}
			continue
		}
		if err != nil || len(specs) != 1 || specs[0].Op != tc.op || specs[0].Mode != tc.mode {
			t.Errorf("%s %s: %v, %v; want one %s %s spec", tc.tool, tc.args, specs, err, tc.op, tc.mode)
		}
	}
}

// TestCutUDSize: a UD message is one packet, so perftest cuts the size to
// the path MTU once it is agreed; RC and UC keep theirs.
func TestCutUDSize(t *testing.T) {
	for _, tc := range []struct {
		qp             string
		size, mtu, got int
	}{
		{"ud", 65536, 4096, 4096},
		{"ud", 4096, 1024, 1024},
		{"ud", 2, 4096, 2},
		{"ud", 4096, 4096, 4096},
		{"ud", 65536, 0, 65536},
		{"uc", 65536, 4096, 65536},
		{"", 65536, 1024, 65536},
	} {
		s := spec.Spec{QPType: tc.qp, Size: tc.size}
		if was := CutUDSize(&s, tc.mtu); was != tc.size || s.Size != tc.got {
			t.Errorf("%q %d B, MTU %d: %d B (was %d), want %d", tc.qp, tc.size, tc.mtu, s.Size, was, tc.got)
		}
	}
}

// TestQKeyFor: UD QPs take perftest's Q_Key (0x11111111), which its sends
// name; RC and UC have none.
func TestQKeyFor(t *testing.T) {
	for qp, want := range map[string]uint32{"ud": 0x11111111, "uc": 0, "rc": 0, "": 0} {
		if got := QKeyFor(spec.Spec{QPType: qp}); got != want {
			t.Errorf("%q: Q_Key 0x%x, want 0x%x", qp, got, want)
		}
	}
}

// TestLost: a UC or UD loop that timed out is told that messages were
// lost; a SEND bandwidth client's timeout on the closing record that the
// server still waits for them; other errors, sides, tests and RC pass
// unchanged.
func TestLost(t *testing.T) {
	timeout, other := errors.New("no progress for 10s"), errors.New("ibv_post_recv: ENOMEM")
	ud := spec.Spec{QPType: "ud", Op: result.OpSend, Mode: result.ModeBW, Iters: 3000}
	for _, tc := range []struct {
		name         string
		s            spec.Spec
		close        bool // LostAtClose, else Lost
		client, tout bool
		err          error
		want         string
	}{
		{"ud loop", ud, false, false, true, timeout, "-c UD does not retransmit: messages were lost"},
		{"uc loop", spec.Spec{QPType: "uc"}, false, false, true, timeout, "-c UC does not retransmit"},
		{"rc loop", spec.Spec{}, false, false, true, timeout, ""},
		{"ud other", ud, false, false, false, other, ""},
		{"ud nil", ud, false, false, true, nil, ""},
		{"ud send bw client", ud, true, true, true, timeout, "the server has not received all 3000 messages: -c UD does not retransmit"},
		{"uc send bw client", spec.Spec{QPType: "uc", Op: result.OpSend, Mode: result.ModeBW, Iters: 5}, true, true, true, timeout, "-c UC does not retransmit"},
		{"server", ud, true, false, true, timeout, ""},
		{"rc close", spec.Spec{Op: result.OpSend, Mode: result.ModeBW}, true, true, true, timeout, ""},
		{"uc write bw", spec.Spec{QPType: "uc", Op: result.OpWrite, Mode: result.ModeBW}, true, true, true, timeout, ""},
		{"ud send lat", spec.Spec{QPType: "ud", Op: result.OpSend, Mode: result.ModeLat}, true, true, true, timeout, ""},
		{"not a timeout", ud, true, true, false, other, ""},
	} {
		var got error
		if tc.close {
			got = LostAtClose(tc.s, tc.client, tc.tout, tc.err)
		} else {
			got = Lost(tc.s, tc.tout, tc.err)
		}
		switch {
		case tc.want == "" && got != tc.err:
			t.Errorf("%s: %v, want it unchanged", tc.name, got)
		case tc.want != "" && (!errors.Is(got, tc.err) || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, got, tc.want)
		}
	}
}

// TestCloseRecord: every tool swaps perftest's closing record but
// ib_write_lat with -R, whose perftest counterpart has none.
func TestCloseRecord(t *testing.T) {
	for _, tc := range []struct {
		op, mode string
		cm, want bool
	}{
		{result.OpWrite, result.ModeLat, true, false},
		{result.OpWrite, result.ModeLat, false, true},
		{result.OpSend, result.ModeLat, true, true},
		{result.OpWrite, result.ModeBW, true, true},
		{result.OpRead, result.ModeLat, true, true},
	} {
		if got := CloseRecord(spec.Spec{Op: tc.op, Mode: tc.mode}, tc.cm); got != tc.want {
			t.Errorf("%s %s -R=%v: %v, want %v", tc.op, tc.mode, tc.cm, got, tc.want)
		}
	}
}

// TestSpecsUDSize: with -c UD and -m, the default size above the MTU is cut
// to it, as perftest cuts it (its bandwidth tools' 65536 B become the MTU),
// instead of a spec that fails validation; a larger -s is refused (as newer
// perftest refuses it); RC and UC keep theirs.
func TestSpecsUDSize(t *testing.T) {
	for _, tc := range []struct {
		tool, args string
		want       int
	}{
		{"ib_send_bw", "-c UD -m 1024 h", 1024},
		{"ib_send_bw", "-c UD -m 2048 -s 4096 h", 0},
		{"ib_send_bw", "-c UD -m 2048 -s 2048 h", 2048},
		{"ib_send_lat", "-c UD -m 1024 h", 2},
		{"ib_send_bw", "-c UC -m 1024 h", 65536},
		{"ib_send_bw", "-m 1024 h", 65536},
	} {
		o, err := Parse(Tools[tc.tool], strings.Fields(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		specs, err := Specs(o)
		if tc.want == 0 {
			if err == nil || !strings.Contains(err.Error(), "exceeds the path MTU") {
				t.Errorf("%s %s: %v, want the size refused", tc.tool, tc.args, err)
			}
			continue
		}
		if err != nil || len(specs) != 1 || specs[0].Size != tc.want {
			t.Errorf("%s %s: %v, %v; want one spec of %d B", tc.tool, tc.args, specs, err, tc.want)
		}
	}
}
