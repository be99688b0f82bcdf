package verbs_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// connectRC moves two RC QPs of ctx to RTS towards each other.
func connectRC(t *testing.T, ctx *verbs.Context, a, b *verbs.QP) {
	t.Helper()
	gid := testutil.GIDIndex(t, ctx)
	port, err := ctx.QueryPort(testutil.Port)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]*verbs.QP{{a, b}, {b, a}} {
		if err := p[0].ToInit(testutil.Port, 0); err != nil {
			t.Fatal(err)
		}
		if err := p[0].ToRTR(verbs.RTRAttr{Port: testutil.Port, PathMTU: port.ActiveMTU, DestQPN: p[1].QPN(), RQPSN: 0x100,
			UseGRH: true, DGID: gid.GID, SGIDIndex: gid.Index, MaxDestRdAtomic: 1}); err != nil {
			t.Fatal(err)
		}
		if err := p[0].ToRTS(verbs.RTSAttr{SQPSN: 0x100, MaxRdAtomic: 1}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRDMASRQ: two receiving QPs share one SRQ. Receives posted to it
// (SRQ.PostRecv, and an engine's PostRecvs) take SENDs from either QP, a
// completion's wr_id names the buffer the message landed in, QP.PostRecv is
// refused, the SRQ does not close while its QPs are open, and bad sizes
// fail with the device's limits.
func TestRDMASRQ(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	da, err := ctx.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	if da.MaxSRQ < 1 || da.MaxSRQWR < 16 {
		t.Fatalf("%s: max_srq %d, max_srq_wr %d", ctx.Name(), da.MaxSRQ, da.MaxSRQWR)
	}
	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseAtEnd(t, "pd", pd)
	if _, err := pd.CreateSRQ(verbs.SRQConfig{MaxWR: 0}); err == nil || !strings.Contains(err.Error(), "max_wr 0 must be at least 1") {
		t.Errorf("CreateSRQ(max_wr 0) = %v", err)
	}
	if _, err := pd.CreateSRQ(verbs.SRQConfig{MaxWR: da.MaxSRQWR + 1}); err == nil || !strings.Contains(err.Error(), "ibv_create_srq") ||
		!strings.Contains(err.Error(), "device limits: max_srq") {
		t.Errorf("CreateSRQ above max_srq_wr = %v", err)
	}
	srq, err := pd.CreateSRQ(verbs.SRQConfig{MaxWR: 16})
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseAtEnd(t, "srq", srq)
	if srq.MaxWR() < 16 {
		t.Errorf("SRQ granted %d receives, asked 16", srq.MaxWR())
	}
	buf, err := verbs.AllocBuffer(8*4096, false)
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseAtEnd(t, "buffer", buf)
	mr, err := pd.RegisterMR(buf, 0, buf.Len(), verbs.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseAtEnd(t, "mr", mr)
	mkQP := func(s *verbs.SRQ) *verbs.QP {
		scq, err := ctx.CreateCQ(32, false)
		if err != nil {
			t.Fatal(err)
		}
		testutil.CloseAtEnd(t, "send cq", scq)
		rcq, err := ctx.CreateCQ(32, false)
		if err != nil {
			t.Fatal(err)
		}
		testutil.CloseAtEnd(t, "recv cq", rcq)
		qp, err := pd.CreateQP(verbs.QPConfig{Type: verbs.QPTypeRC, SendCQ: scq, RecvCQ: rcq, SRQ: s, Caps: verbs.QPCaps{MaxSendWR: 16, MaxRecvWR: 16}})
		if err != nil {
			t.Fatal(err)
		}
		return qp
	}
	// receivers first: they close after the SRQ check below
	r1, r2 := mkQP(srq), mkQP(srq)
	s1, s2 := mkQP(nil), mkQP(nil)
	testutil.CloseAtEnd(t, "sender 1", s1)
	testutil.CloseAtEnd(t, "sender 2", s2)
	connectRC(t, ctx, s1, r1)
	connectRC(t, ctx, s2, r2)
	if r1.SRQ() != srq || s1.SRQ() != nil {
		t.Error("QP.SRQ does not name the SRQ the QP was created with")
	}
	if err := r1.PostRecv(1, mr, 0, 64); err == nil || !strings.Contains(err.Error(), "post to the SRQ") {
		t.Errorf("QP.PostRecv on an SRQ QP = %v, want a refusal", err)
	}
	if err := srq.PostRecv(1, mr, buf.Len(), 64); err == nil {
		t.Error("SRQ.PostRecv outside the MR: no error")
	}
	// two receives, in buffers 4 and 5; the SENDs come from two QPs
	for i := 4; i <= 5; i++ {
		if err := srq.PostRecv(uint64(i), mr, i*4096, 64); err != nil {
			t.Fatal(err)
		}
	}
	msgs := map[*verbs.QP][]byte{s1: bytes.Repeat([]byte{0xa1}, 64), s2: bytes.Repeat([]byte{0xb2}, 64)}
	for i, s := range []*verbs.QP{s1, s2} {
		copy(buf.Bytes()[i*4096:], msgs[s])
		if err := s.PostSend(verbs.SendWR{WRID: uint64(i), Op: verbs.OpSend, MR: mr, Offset: i * 4096, Len: 64, Signaled: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SendCQ().Wait(waitFor); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range []*verbs.QP{r1, r2} {
		wc, err := r.RecvCQ().Wait(waitFor)
		if err != nil {
			t.Fatal(err)
		}
		if wc.WRID != 4 && wc.WRID != 5 || int(wc.ByteLen) != 64 || wc.QPN != r.QPN() {
			t.Fatalf("receiver %d: completion %+v", i+1, wc)
		}
		want := msgs[[]*verbs.QP{s1, s2}[i]]
		if got := buf.Bytes()[int(wc.WRID)*4096 : int(wc.WRID)*4096+64]; !bytes.Equal(got, want) {
			t.Errorf("receiver %d: buffer %d holds % x..., want % x...", i+1, wc.WRID, got[:4], want[:4])
		}
	}
	// an engine on r1 posts to the SRQ; RecvOne says where the message landed
	eng, err := verbs.NewEngine(verbs.EngineConfig{QP: r1, MR: mr, Op: verbs.OpSend, Size: 64, RecvOffset: 6 * 4096, TxDepth: 1, CQMod: 1,
		RxDepth: 4, Timeout: 5 * time.Second, Samples: 16})
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseAtEnd(t, "engine", eng)
	if err := eng.PostRecvs(1); err != nil {
		t.Fatal(err)
	}
	snd, err := verbs.NewEngine(verbs.EngineConfig{QP: s1, MR: mr, Op: verbs.OpSend, Size: 64, RecvOffset: 4096, TxDepth: 1, CQMod: 1,
		RxDepth: 1, Timeout: 5 * time.Second, Samples: 16})
	if err != nil {
		t.Fatal(err)
	}
	testutil.CloseAtEnd(t, "sender engine", snd)
	copy(buf.Bytes(), bytes.Repeat([]byte{0xc3}, 64))
	if err := snd.PostOne(); err != nil {
		t.Fatal(err)
	}
	addr, n, err := eng.RecvOne()
	if err != nil {
		t.Fatal(err)
	}
	if addr != eng.RecvArea() || addr != mr.Addr()+6*4096 || n != 64 || buf.Bytes()[6*4096] != 0xc3 {
		t.Errorf("RecvOne: area 0x%x (engine's 0x%x), %d bytes, first byte 0x%02x", addr, eng.RecvArea(), n, buf.Bytes()[6*4096])
	}
	if err := srq.Close(); err == nil || !strings.Contains(err.Error(), "2 QPs still use it") {
		t.Errorf("SRQ.Close with 2 QPs open = %v", err)
	}
	for _, q := range []*verbs.QP{r1, r2} {
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srq.Close(); err != nil {
		t.Errorf("SRQ.Close after its QPs: %v", err)
	}
	if err := srq.PostRecv(1, mr, 0, 64); err != verbs.ErrClosed {
		t.Errorf("PostRecv after Close = %v, want ErrClosed", err)
	}
}
