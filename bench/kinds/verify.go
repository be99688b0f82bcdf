package kinds

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testhook"
	"github.com/rdmabench/rdmabench/verbs"
)

// Payload checking (--verify, perftest's --data_validation).
//
// The measured run is left alone: its buffers are never touched while it
// runs, so no timed interval and no bandwidth figure includes a check.
// After it (after the server's result), the test runs a verify pass of
// VerifyMessages(s) messages, message k on measured QP k mod QPs, in lock
// step over the control connection:
//
//   - SEND, WRITE: the client fills its source with message k's pattern,
//     posts one operation and waits for its completion (Engine.PostOne),
//     then sends proto.Verify{k}. The server takes the receive completion
//     (SEND, Engine.RecvOne: the receive's wr_id names the buffer it landed
//     in, which matters with a shared receive queue) or reads its target
//     area (WRITE), compares it with the pattern and answers, with the
//     first differing byte when there is one.
//   - SEND and WRITE with immediate: as SEND and WRITE, the client posting
//     message k with its own immediate (VerifyImm); the server takes the
//     receive completion and checks its kind (IBV_WC_RECV with
//     IBV_WC_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM) and its immediate, then
//     the payload (the receive area, or the target area of a WRITE).
//   - READ: the client sends proto.Verify{k}; the server fills its target
//     area with the pattern and answers; the client reads it with one READ
//     and compares what landed in its sink.
//
// After the last message the client sends proto.Verify{Message: count},
// the end of the pass: only then may the server free the buffer the
// client's last READ reads.
//
// The pass has the timed phase's heartbeat (watch.go): each side sends
// Ready{alive} every ctrl.HeartbeatEvery while the pass runs, and each reads the
// other's next step with a deadline of ctrl.HeartbeatTimeout per message
// (recvVerify), skipping the heartbeats, within verifyTimeout in all. A
// stopped peer is noticed at the heartbeat deadline, not after
// verifyTimeout. Each side stops its heartbeat before the last frame it
// sends in the pass (the client's end or error, the server's last answer,
// a mismatch or error), so no heartbeat trails into the next test.
//
// The pattern of message k is a byte stream that depends on the test (its
// name: op, mode, size, transport) and on k (verifySeed), so a buffer left
// over from an earlier message, or from the measured run, fails as surely
// as a flipped bit. Atomics carry an 8-byte operand, not a payload, and the
// TCP baseline is not RDMA: both refuse --verify (validateVerify).

// verifyBytes bounds the bytes one verify pass moves: above 1 MiB messages
// it checks fewer than DefaultVerifyMessages.
const verifyBytes = 64 << 20

// minVerifyMessages is the fewest messages a pass checks (of any size).
const minVerifyMessages = 4

// VerifyMessages is how many messages the verify pass of s checks:
// DefaultVerifyMessages, fewer for messages above 1 MiB (at most
// verifyBytes in all, at least minVerifyMessages), and at least one per QP.
func VerifyMessages(s spec.Spec) int {
	n := min(spec.DefaultVerifyMessages, max(verifyBytes/s.Size, minVerifyMessages))
	return max(n, s.NumQPs())
}

// verifyTimeout is how long one side of the verify pass waits for the
// other's step: the peer's step may wait EngineTimeout for its completion.
func verifyTimeout() time.Duration { return endpoint.EngineTimeout + ctrl.MsgTimeout }

// verifyGrace is how long the server keeps looking at the target area of an
// unreliable (UC) WRITE whose bytes do not match yet: a UC WRITE completes
// at the client when it is sent, not when it lands.
var verifyGrace = time.Second

// VerifyChecker is the side that compares: the server for SEND and WRITE
// (what arrived), the client for READ (what it read).
func VerifyChecker(op string) string {
	t, _ := spec.OpOf(op)
	return t.Verifier
}

// verifySeed is the pattern seed of message k of test s: the same on both
// sides, different for every test and message.
func verifySeed(s spec.Spec, k int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s.Name()))
	return mix64(h.Sum64() ^ uint64(k+1)*0x9e3779b97f4a7c15)
}

// VerifyImm is the immediate of message k of test s (an op with
// immediate data): the pattern seed's high half, different per message.
func VerifyImm(s spec.Spec, k int) uint32 { return uint32(verifySeed(s, k) >> 32) }

// immMismatch checks the receive completion r of message k of test s (an
// op with immediate data, posted as opcode): nil when it is a completion of
// that op carrying message k's immediate.
func immMismatch(s spec.Spec, k int, opcode verbs.Opcode, r verbs.Received) *proto.ImmMismatch {
	want := VerifyImm(s, k)
	if testhook.VerifyCorruptImm {
		r.Imm ^= 1
	}
	if r.HasImm && r.Opcode == opcode && r.Imm == want {
		return nil
	}
	m := &proto.ImmMismatch{Expected: want, Opcode: r.Opcode.String()}
	if r.HasImm {
		m.Seen = r.Imm
	}
	return m
}

// mix64 is splitmix64's finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// patternWord is word i (bytes 8i..8i+7, little-endian) of seed's pattern:
// counter-based, so any word is computed on its own.
func patternWord(seed uint64, i int) uint64 { return mix64(seed + uint64(i+1)*0x9e3779b97f4a7c15) }

// fillPattern writes seed's pattern into b.
func fillPattern(b []byte, seed uint64) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], patternWord(seed, i/8))
	}
	if i < len(b) {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], patternWord(seed, i/8))
		copy(b[i:], w[:])
	}
}

// checkPattern compares b with seed's pattern. On a mismatch it returns the
// offset of the first differing byte, the pattern's byte and b's, and false.
func checkPattern(b []byte, seed uint64) (off int, want, got byte, ok bool) {
	var w [8]byte
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(w[:], patternWord(seed, i/8))
		end := min(i+8, len(b))
		if i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:]) == binary.LittleEndian.Uint64(w[:]) {
			continue
		}
		for j := i; j < end; j++ {
			if b[j] != w[j-i] {
				return j, w[j-i], b[j], false
			}
		}
	}
	return 0, 0, 0, true
}

// plantCorruption applies testhook.VerifyCorrupt to a received message b.
func plantCorruption(b []byte) {
	if at := testhook.VerifyCorrupt; at >= 0 && at < len(b) {
		b[at] ^= 0xff
	}
}

// mismatchOf checks a received message b of test s (want bytes; n arrived)
// against message k's pattern; nil when it matches.
func mismatchOf(s spec.Spec, k int, b []byte, n int) *proto.Mismatch {
	if n != s.Size {
		return &proto.Mismatch{Len: n}
	}
	off, want, got, ok := checkPattern(b, verifySeed(s, k))
	if ok {
		return nil
	}
	return &proto.Mismatch{Offset: off, Expected: want, Seen: got, Len: n}
}

// VerifyError is a message that failed its --verify check: its first byte
// that differs from the pattern, or (SEND) a length other than the message
// size. The CLI exits with the data-path code.
type VerifyError struct {
	Op       string // the test's op: send, write, read, write_imm or send_imm
	Checker  string // the side that compared: "server" or "client"
	Message  int    // 0-based, of Messages
	Messages int
	QP       int // measured QP index (in --qps order)
	Size     int // message size, bytes
	Len      int // bytes that arrived
	Offset   int
	Expected byte
	Seen     byte
	// Imm, when set, is the receive completion of a message with
	// immediate data that did not carry its immediate (the payload's
	// fields are then zero).
	Imm *proto.ImmMismatch
}

func (e *VerifyError) Error() string {
	if m := e.Imm; m != nil {
		return fmt.Sprintf("--verify: %s immediate data wrong, seen by the %s in message %d of %d (QP %d): the receive completion "+
			"is %s with immediate 0x%08x, want %s with 0x%08x", strings.ToUpper(e.Op), e.Checker, e.Message, e.Messages, e.QP,
			m.Opcode, m.Seen, endpoint.OpVerbs[e.Op].Code, m.Expected)
	}
	where := fmt.Sprintf("--verify: %s payload corrupted, seen by the %s in message %d of %d (QP %d)",
		strings.ToUpper(e.Op), e.Checker, e.Message, e.Messages, e.QP)
	if e.Len != e.Size {
		return fmt.Sprintf("%s: %d bytes arrived, want %d", where, e.Len, e.Size)
	}
	return fmt.Sprintf("%s: offset %d of %d: expected byte 0x%02x, seen 0x%02x", where, e.Offset, e.Size, e.Expected, e.Seen)
}

// verifyErrorOf builds the VerifyError of message k's mismatch m.
func verifyErrorOf(s spec.Spec, k, qp int, m *proto.Mismatch) *VerifyError {
	return &VerifyError{Op: s.Op, Checker: VerifyChecker(s.Op), Message: k, Messages: VerifyMessages(s), QP: qp, Size: s.Size,
		Len: m.Len, Offset: m.Offset, Expected: m.Expected, Seen: m.Seen, Imm: m.Imm}
}

// VerifyPass is the --verify pass after an RDMA kind's measured run and
// the server's result: both halves.
type VerifyPass struct{}

// measure runs the client's side of the verify pass.
func (VerifyPass) Measure(t *ClientTest) (*result.Verification, error) {
	s := t.Spec
	qps := t.EPs.Measured()
	n := VerifyMessages(s)
	stopBeat := Heartbeat(t.C)
	defer stopBeat()
	fail := func(err error) error { // tell the server, after the last heartbeat
		stopBeat()
		t.C.SendError(err)
		return err
	}
	for k := range n {
		q := k % len(qps)
		ep := qps[q]
		if s.Traits().Verifier == spec.VerifyServer { // the client sends the pattern
			fillPattern(ep.SourceBytes(), verifySeed(s, k))
			if s.Traits().Imm {
				ep.Eng.SetImm(VerifyImm(s, k)) // PostOne posts work request 0: this immediate
			}
			if err := ep.Eng.PostOne(); err != nil {
				return nil, fail(fmt.Errorf("--verify: message %d of %d (QP %d): %w", k, n, q, err))
			}
		}
		reply, err := verifyStep(t.C, t.Peer, q, k)
		if err != nil {
			return nil, err
		}
		if reply.Mismatch != nil {
			return nil, verifyErrorOf(s, k, q, reply.Mismatch)
		}
		if s.Traits().Verifier == spec.VerifyClient { // the client reads the pattern
			if err := ep.Eng.PostOne(); err != nil {
				return nil, fail(fmt.Errorf("--verify: message %d of %d (QP %d): %w", k, n, q, err))
			}
			b := ep.SinkBytes()
			plantCorruption(b)
			if m := mismatchOf(s, k, b, len(b)); m != nil {
				return nil, fail(verifyErrorOf(s, k, q, m))
			}
		}
	}
	// the end of the pass: the server may free its buffers (the last READ is done)
	stopBeat()
	if err := t.C.Send(proto.MsgVerify, proto.Verify{Message: n}); err != nil {
		return nil, err
	}
	return &result.Verification{Messages: int64(n), Bytes: int64(n) * int64(s.Size), CheckedBy: VerifyChecker(s.Op)}, nil
}

// verifyStep tells the server (at peer, on c) that message k on QP q is
// ready and returns its answer. A server that stops answering and stops
// its heartbeat is lost (*PeerLostError) at the heartbeat deadline.
func verifyStep(c ctrl.Chan, peer string, q, k int) (proto.Verify, error) {
	if err := c.Send(proto.MsgVerify, proto.Verify{QP: q, Message: k}); err != nil {
		return proto.Verify{}, lostError(peer, err)
	}
	var reply proto.Verify
	if err := recvVerify(c, &reply, verifyTimeout()); err != nil {
		var re *proto.RemoteError
		if !errors.As(err, &re) && (errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)) {
			err = lostError(peer, err)
		}
		return proto.Verify{}, fmt.Errorf("--verify: message %d (QP %d): %w", k, q, err)
	}
	if reply.QP != q || reply.Message != k {
		return proto.Verify{}, &proto.Error{Op: "--verify", Err: fmt.Errorf("server answered message %d on QP %d, want message %d on QP %d", reply.Message, reply.QP, k, q)}
	}
	return reply, nil
}

// recvVerify reads the peer's next verify message into v, skipping its
// heartbeats: each message within ctrl.HeartbeatTimeout, the verify message
// within total. A silent peer fails with the connection's deadline error
// (os.ErrDeadlineExceeded) at the heartbeat deadline.
func recvVerify(c ctrl.Chan, v *proto.Verify, total time.Duration) error {
	deadline := time.Now().Add(total)
	for {
		wait := min(ctrl.HeartbeatTimeout, time.Until(deadline))
		if wait <= 0 {
			return &proto.Error{Op: "waiting for verify", Err: fmt.Errorf("none within %v (only heartbeats): %w", total, os.ErrDeadlineExceeded)}
		}
		t, payload, err := c.RecvAny(wait)
		if err != nil {
			return err
		}
		if t == proto.MsgReady {
			var r proto.Ready
			if err := c.Decode(t, payload, &r); err == nil && r.Phase == proto.PhaseAlive {
				continue
			}
		}
		if t != proto.MsgVerify {
			return &proto.Error{Op: "waiting for verify", Err: fmt.Errorf("%w: expected %v, got %v", proto.ErrUnexpectedType, proto.MsgVerify, t)}
		}
		return c.Decode(t, payload, v)
	}
}

// respond runs the server's side of the verify pass on its measured
// endpoints, after its result. A mismatch goes to the client in the
// answer (the client reports it); it is logged here and ends the pass.
func (VerifyPass) Respond(t *ServerTest) error {
	c, spec := t.C, t.Spec
	qps := t.EPs.Measured()
	n := VerifyMessages(spec)
	for _, ep := range qps {
		ep.Eng.ResetAbort() // an unreliable receiver may have been stopped (awaitQuiet)
	}
	t.Log.Printf("%s: --verify pass: %d messages", spec.Name(), n)
	stopBeat := Heartbeat(c)
	defer stopBeat() // before the caller sends an error
	for k := 0; ; k++ {
		var v proto.Verify
		if err := recvVerify(c, &v, verifyTimeout()); err != nil {
			var re *proto.RemoteError
			if errors.As(err, &re) { // the client gave up (its own check or step failed): it reports
				t.Log.Printf("%s: --verify: the client stopped at message %d: %v", spec.Name(), k, re)
				return nil
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return fmt.Errorf("--verify: message %d of %d: no heartbeat from the client for %v: %w", k, n, ctrl.HeartbeatTimeout, err)
			}
			return err
		}
		if k == n && v.Message == n && v.QP == 0 && v.Mismatch == nil {
			return nil // the end of the pass
		}
		if q := k % len(qps); k == n || v.Message != k || v.QP != q || v.Mismatch != nil {
			return fmt.Errorf("--verify: client sent message %d on QP %d, want message %d on QP %d (%d messages, %d QPs)", v.Message, v.QP, k, q, n, len(qps))
		}
		m, err := verifyServerStep(spec, qps, v.QP, k)
		if err != nil {
			return fmt.Errorf("--verify: message %d of %d (QP %d): %w", k, n, v.QP, err)
		}
		if k == n-1 || m != nil {
			stopBeat() // the last answer of the pass: nothing may follow it
		}
		if err := c.Send(proto.MsgVerify, proto.Verify{QP: v.QP, Message: k, Mismatch: m}); err != nil {
			return err
		}
		if m != nil {
			t.Log.Printf("%s: %v", spec.Name(), verifyErrorOf(spec, k, v.QP, m))
			return nil
		}
	}
}

// verifyServerStep is the server's part of message k on QP q: check what a
// SEND or WRITE delivered, or fill the target area a READ will read.
func verifyServerStep(s spec.Spec, qps []*endpoint.Endpoint, q, k int) (*proto.Mismatch, error) {
	ep := qps[q]
	switch t := s.Traits(); {
	case t.Verifier == spec.VerifyServer && t.Imm: // with immediate: the completion, then the payload
		r, err := ep.Eng.Receive()
		if err != nil {
			return nil, err
		}
		if m := immMismatch(s, k, endpoint.OpVerbs[s.Op].Code, r); m != nil {
			return &proto.Mismatch{Len: r.Len, Imm: m}, nil
		}
		b := ep.TargetBytes() // WRITE: the target area; the receive took nothing
		if t.Access == spec.AccessNone {
			if b, err = recvBytes(qps, r.Addr); err != nil { // SEND: the receive area it took
				return nil, err
			}
		}
		plantCorruption(b)
		return mismatchOf(s, k, b, r.Len), nil
	case t.Verifier == spec.VerifyServer && t.ConsumesRecv: // SEND: what the receive took
		addr, n, err := ep.Eng.RecvOne()
		if err != nil {
			return nil, err
		}
		b, err := recvBytes(qps, addr)
		if err != nil {
			return nil, err
		}
		if ep.QP.Type() == verbs.QPTypeUD {
			n -= verbs.GRHSize
		}
		plantCorruption(b)
		return mismatchOf(s, k, b, n), nil
	case t.Verifier == spec.VerifyServer: // WRITE: what landed in the target area
		b := ep.TargetBytes()
		plantCorruption(b)
		m := mismatchOf(s, k, b, len(b))
		for end := time.Now().Add(verifyGrace); m != nil && s.Unreliable() && time.Now().Before(end); {
			time.Sleep(time.Millisecond) // UC: the WRITE may still be on its way
			m = mismatchOf(s, k, b, len(b))
		}
		return m, nil
	case t.Verifier == spec.VerifyClient: // READ: what the client will fetch
		fillPattern(ep.TargetBytes(), verifySeed(s, k))
		return nil, nil
	}
	return nil, fmt.Errorf("op %s has no payload to check", s.Op)
}

// recvBytes is the message in the receive area at addr (a receive's wr_id),
// whichever of the test's endpoints it belongs to: with a shared receive
// queue a message takes whichever receive is oldest. UD: after the GRH.
func recvBytes(qps []*endpoint.Endpoint, addr uint64) ([]byte, error) {
	for _, ep := range qps {
		// receives step over the area's cycle in SEND bandwidth tests
		if base := ep.Eng.RecvArea(); addr >= base && addr < base+ep.Eng.RecvSpan() {
			b := ep.MR.Bytes()[ep.Area+int(addr-base):]
			if ep.QP.Type() == verbs.QPTypeUD {
				b = b[verbs.GRHSize:]
			}
			return b[:ep.Spec.Size], nil
		}
	}
	return nil, fmt.Errorf("a receive completed at 0x%x, which is no receive area of the test's %d QPs", addr, len(qps))
}
