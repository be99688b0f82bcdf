package bench

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestPerftestQPType: against perftest the drop-in runs UC with SEND and
// WRITE and UD with SEND, as perftest allows them, and refuses the rest by
// name (the option and what is supported); -R stays RC only.
func TestPerftestQPType(t *testing.T) {
	for _, tc := range []struct {
		qp, op, mode string
		cm           bool
		refused      string // "" when supported
	}{
		{"", result.OpSend, result.ModeLat, false, ""},
		{"rc", result.OpRead, result.ModeBW, true, ""},
		{"uc", result.OpSend, result.ModeLat, false, ""},
		{"uc", result.OpWrite, result.ModeLat, false, ""},
		{"uc", result.OpSend, result.ModeBW, false, ""},
		{"uc", result.OpWrite, result.ModeBW, false, ""},
		{"ud", result.OpSend, result.ModeLat, false, ""},
		{"ud", result.OpSend, result.ModeBW, false, ""},
		{"uc", result.OpRead, result.ModeLat, false, "-c UC with read"},
		{"ud", result.OpWrite, result.ModeBW, false, "-c UD with write"},
		{"ud", result.OpSend, result.ModeLat, true, "-c UD with -R (rdma_cm QPs: RC only; UC and UD without -R)"},
		{"uc", result.OpWrite, result.ModeBW, true, "-c UC with -R"},
		{"xrc", result.OpSend, result.ModeBW, false, "-c XRC (RC, UC and UD)"},
	} {
		s := Spec{QPType: tc.qp, Op: tc.op, Mode: tc.mode, RDMACM: tc.cm, Size: 2, Iters: 10}
		err := PerftestSupported(s)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s %s %s -R=%v: %v, want supported", tc.qp, tc.op, tc.mode, tc.cm, err)
		case tc.refused != "" && (!errors.Is(err, ErrPerftestUnsupported) || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s %s %s -R=%v: %v, want %q", tc.qp, tc.op, tc.mode, tc.cm, err, tc.refused)
		}
	}
}

// TestPerftestUDSize: a UD message is one packet, so perftest cuts the size
// to the path MTU once it is agreed; RC and UC keep theirs.
func TestPerftestUDSize(t *testing.T) {
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
		s := Spec{QPType: tc.qp, Size: tc.size}
		if was := perftestUDSize(&s, tc.mtu); was != tc.size || s.Size != tc.got {
			t.Errorf("%q %d B, MTU %d: %d B (was %d), want %d", tc.qp, tc.size, tc.mtu, s.Size, was, tc.got)
		}
	}
}

// TestPerftestQKey: UD QPs take perftest's Q_Key (0x11111111), and their
// sends name it; RC and UC have none.
func TestPerftestQKey(t *testing.T) {
	if perftestQKey != 0x11111111 {
		t.Fatalf("perftest's Q_Key 0x%x, want 0x11111111", perftestQKey)
	}
	for qp, want := range map[string]uint32{"ud": 0x11111111, "uc": 0, "rc": 0, "": 0} {
		s := Spec{QPType: qp}
		eps := []*endpoint{{qkey: 7}, {qkey: 9}}
		setPerftestQKey(s, eps)
		for i, e := range eps {
			if got := e.qkey; (want != 0 && got != want) || (want == 0 && got != []uint32{7, 9}[i]) {
				t.Errorf("%q: QP %d Q_Key 0x%x", qp, i, got)
			}
		}
		if got := peerQKey(s); got != want {
			t.Errorf("%q: the sends' Q_Key 0x%x, want 0x%x", qp, got, want)
		}
	}
}

// TestPerftestLost: a UC or UD receiver that timed out is told that
// messages were lost; other errors and RC pass unchanged.
func TestPerftestLost(t *testing.T) {
	timeout := fmt.Errorf("bandwidth server: %w: no progress", verbs.ErrTimeout)
	other := errors.New("ibv_post_recv: ENOMEM")
	for _, tc := range []struct {
		qp   string
		err  error
		want string
	}{
		{"ud", timeout, "-c UD does not retransmit: messages were lost"},
		{"uc", timeout, "-c UC does not retransmit"},
		{"rc", timeout, ""},
		{"ud", other, ""},
		{"ud", nil, ""},
	} {
		got := perftestLost(Spec{QPType: tc.qp}, tc.err)
		switch {
		case tc.want == "" && got != tc.err:
			t.Errorf("%s %v: %v, want it unchanged", tc.qp, tc.err, got)
		case tc.want != "" && (!errors.Is(got, verbs.ErrTimeout) || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s %v: %v, want %q", tc.qp, tc.err, got, tc.want)
		}
	}
}

// TestPerftestLostAtClose: a UC or UD SEND bandwidth client whose closing
// record times out is told that the server still waits for lost messages;
// servers, other tests, RC and other errors pass unchanged.
func TestPerftestLostAtClose(t *testing.T) {
	timeout := fmt.Errorf("closing handshake: read: %w", os.ErrDeadlineExceeded)
	bw := Spec{QPType: "ud", Op: result.OpSend, Mode: result.ModeBW, Iters: 3000}
	for _, tc := range []struct {
		name   string
		s      Spec
		client bool
		err    error
		want   string
	}{
		{"ud send bw client", bw, true, timeout, "the server has not received all 3000 messages: -c UD does not retransmit"},
		{"uc send bw client", Spec{QPType: "uc", Op: result.OpSend, Mode: result.ModeBW, Iters: 5}, true, timeout, "-c UC does not retransmit"},
		{"server", bw, false, timeout, ""},
		{"rc", Spec{Op: result.OpSend, Mode: result.ModeBW}, true, timeout, ""},
		{"uc write bw", Spec{QPType: "uc", Op: result.OpWrite, Mode: result.ModeBW}, true, timeout, ""},
		{"ud send lat", Spec{QPType: "ud", Op: result.OpSend, Mode: result.ModeLat}, true, timeout, ""},
		{"not a timeout", bw, true, errors.New("closing handshake: EOF"), ""},
	} {
		got := perftestLostAtClose(tc.s, tc.client, tc.err)
		switch {
		case tc.want == "" && got != tc.err:
			t.Errorf("%s: %v, want it unchanged", tc.name, got)
		case tc.want != "" && (!errors.Is(got, os.ErrDeadlineExceeded) || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, got, tc.want)
		}
	}
}
