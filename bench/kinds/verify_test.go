package kinds

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestPattern: a filled buffer checks clean at every length (whole words
// and a tail); a flipped byte is found at its offset with both bytes; the
// pattern differs between messages and between tests.
func TestPattern(t *testing.T) {
	s := spec.Spec{Op: result.OpSend, Mode: result.ModeBW, Size: 4096}
	for _, n := range []int{1, 2, 7, 8, 9, 63, 64, 4096, 4099} {
		b := make([]byte, n)
		fillPattern(b, verifySeed(s, 5))
		if off, _, _, ok := checkPattern(b, verifySeed(s, 5)); !ok {
			t.Fatalf("%d bytes: clean buffer fails at %d", n, off)
		}
		for _, at := range []int{0, n / 2, n - 1} {
			c := append([]byte(nil), b...)
			c[at] ^= 0x5a
			off, want, got, ok := checkPattern(c, verifySeed(s, 5))
			if ok || off != at || want != b[at] || got != b[at]^0x5a {
				t.Errorf("%d bytes, flip at %d: offset %d expected 0x%02x seen 0x%02x ok %v", n, at, off, want, got, ok)
			}
		}
		if _, _, _, ok := checkPattern(b, verifySeed(s, 6)); ok && n >= 4 {
			t.Errorf("%d bytes: message 5's pattern passes as message 6's (a stale buffer would)", n)
		}
	}
	other := s
	other.Size = 8192
	if verifySeed(s, 0) == verifySeed(other, 0) {
		t.Error("two tests share a seed")
	}
}

func TestVerifyMessages(t *testing.T) {
	for _, tc := range []struct {
		size, qps, want int
	}{
		{2, 0, spec.DefaultVerifyMessages},
		{1 << 20, 0, spec.DefaultVerifyMessages},
		{4 << 20, 0, 16},
		{1 << 30, 0, minVerifyMessages},
		{64, 64, 64},
		{1 << 30, 8, 8},
	} {
		if got := VerifyMessages(spec.Spec{Size: tc.size, QPs: tc.qps}); got != tc.want {
			t.Errorf("VerifyMessages(size %d, qps %d) = %d, want %d", tc.size, tc.qps, got, tc.want)
		}
	}
}

// TestVerifyErrorText: the message names the op, the side, the message,
// the offset and both bytes.
func TestVerifyErrorText(t *testing.T) {
	s := spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 65536}
	err := verifyErrorOf(s, 0, 0, &proto.Mismatch{Offset: 1000, Expected: 0x3c, Seen: 0xc3, Len: 65536})
	want := "--verify: WRITE payload corrupted, seen by the server in message 0 of 64 (QP 0): offset 1000 of 65536: expected byte 0x3c, seen 0xc3"
	if err.Error() != want {
		t.Errorf("got  %q\nwant %q", err, want)
	}
	short := verifyErrorOf(spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 64}, 2, 0, &proto.Mismatch{Len: 60})
	if !strings.Contains(short.Error(), "60 bytes arrived, want 64") {
		t.Errorf("short message: %v", short)
	}
	if m := mismatchOf(s, 1, make([]byte, 10), 10); m == nil || m.Len != 10 {
		t.Errorf("a 10-byte message of a 65536-byte test: %+v", m)
	}
}

// TestVerifyImm: a receive completion of the right kind with message k's
// immediate passes; another message's immediate, none, or the other op's
// completion is a mismatch whose text names both immediates and opcodes.
func TestVerifyImm(t *testing.T) {
	for _, op := range []string{result.OpWriteImm, result.OpSendImm} {
		s := spec.Spec{Op: op, Mode: result.ModeLat, Size: 64}
		code := endpoint.OpVerbs[op].Code
		good := verbs.Received{Len: 64, Opcode: code, Imm: VerifyImm(s, 3), HasImm: true}
		if m := immMismatch(s, 3, code, good); m != nil {
			t.Errorf("%s: message 3's own completion: %+v", op, m)
		}
		if VerifyImm(s, 3) == VerifyImm(s, 4) {
			t.Errorf("%s: messages 3 and 4 share an immediate", op)
		}
		stale, none, other := good, good, good
		stale.Imm = VerifyImm(s, 2)
		none.HasImm, none.Imm, none.Opcode = false, 0, verbs.OpSend
		other.Opcode = verbs.OpSendWithImm
		if op == result.OpSendImm {
			other.Opcode = verbs.OpWriteWithImm
		}
		for name, r := range map[string]verbs.Received{"stale": stale, "none": none, "other op": other} {
			m := immMismatch(s, 3, code, r)
			if m == nil || m.Expected != VerifyImm(s, 3) || (r.HasImm && m.Seen != r.Imm) || m.Opcode != r.Opcode.String() {
				t.Errorf("%s %s: %+v", op, name, m)
				continue
			}
			err := verifyErrorOf(s, 3, 1, &proto.Mismatch{Len: 64, Imm: m})
			want := fmt.Sprintf("--verify: %s immediate data wrong, seen by the server in message 3 of 64 (QP 1): the receive completion is %s with immediate 0x%08x, want %s with 0x%08x",
				strings.ToUpper(op), r.Opcode, m.Seen, code, VerifyImm(s, 3))
			if err.Error() != want {
				t.Errorf("%s %s:\n got  %q\n want %q", op, name, err, want)
			}
		}
	}
}

// TestVerifySRQValidation: --verify and --srq are refused, by name, where
// they do not apply.
func TestVerifySRQValidation(t *testing.T) {
	base := spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Iters: 10, TxDepth: 1, CQMod: 1, RxDepth: 16}
	for _, tc := range []struct {
		name string
		mod  func(*spec.Spec)
		want string // "" = valid
	}{
		{"verify send", func(s *spec.Spec) { s.Verify = true }, ""},
		{"verify read", func(s *spec.Spec) { s.Verify, s.Op = true, result.OpRead }, ""},
		{"verify ud", func(s *spec.Spec) { s.Verify, s.QPType = true, result.QPTypeUD }, ""},
		{"verify atomics", func(s *spec.Spec) { s.Verify, s.Op, s.Size = true, result.OpFetchAdd, 8 }, "fetch_add carries an 8-byte operand"},
		{"verify tcp", func(s *spec.Spec) { s.Verify, s.Transport = true, result.TransportTCP }, "not the TCP baseline"},
		{"srq send", func(s *spec.Spec) { s.SRQ = true }, ""},
		{"srq ud", func(s *spec.Spec) { s.SRQ, s.QPType = true, result.QPTypeUD }, ""},
		{"srq write", func(s *spec.Spec) { s.SRQ, s.Op = true, result.OpWrite }, "only a SEND consumes receives (op write)"},
		{"srq uc", func(s *spec.Spec) { s.SRQ, s.QPType = true, result.QPTypeUC }, "not supported on UC QPs"},
		{"srq tcp", func(s *spec.Spec) { s.SRQ, s.Transport = true, result.TransportTCP }, "not to the TCP baseline"},
	} {
		s := base
		tc.mod(&s)
		err := s.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestVerifyHeartbeat: a verify step that takes longer than the heartbeat
// deadline passes while the peer's heartbeat goes on (the answer arrives
// after it), and a peer that stops (no answer, no heartbeat) is lost at the
// heartbeat deadline, not at verifyTimeout: the client's verifyStep names
// the lost server.
func TestVerifyHeartbeat(t *testing.T) {
	defer func(e, to time.Duration) { ctrl.HeartbeatEvery, ctrl.HeartbeatTimeout = e, to }(ctrl.HeartbeatEvery, ctrl.HeartbeatTimeout)
	ctrl.HeartbeatEvery, ctrl.HeartbeatTimeout = 20*time.Millisecond, 500*time.Millisecond
	a, b := net.Pipe()
	client, server := proto.NewConn(a, time.Second), proto.NewConn(b, time.Second)
	defer client.Close()
	defer server.Close()
	// a slow step: 3 heartbeat deadlines of heartbeats, then the answer
	go func() {
		var v proto.Verify
		if server.Recv(proto.MsgVerify, &v) != nil {
			return
		}
		stop := Heartbeat(server)
		time.Sleep(3 * ctrl.HeartbeatTimeout)
		stop()
		server.Send(proto.MsgVerify, proto.Verify{QP: v.QP, Message: v.Message})
	}()
	if _, err := verifyStep(client, "server:1", 0, 0); err != nil {
		t.Fatalf("a slow step with heartbeats: %v", err)
	}
	// a stopped server: it reads the step and then sends nothing
	go func() {
		var v proto.Verify
		server.Recv(proto.MsgVerify, &v)
	}()
	start := time.Now()
	_, err := verifyStep(client, "server:1", 0, 1)
	var pl *PeerLostError
	if !errors.As(err, &pl) || !strings.Contains(err.Error(), "no heartbeat from the server for 500ms") {
		t.Fatalf("a stopped server: %v, want it lost for its heartbeat", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a stopped server noticed after %v, want the 500ms heartbeat deadline", d)
	}
}
