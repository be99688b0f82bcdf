package verbs_test

import (
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestRDMACMUD connects a UD QP pair through rdma_cm's UDP port space on the
// device with a non-loopback address (rxe1 in the guest), as perftest's -c
// UD -R does: the server posts a receive and accepts (the SIDR reply names
// its QP); the client's ESTABLISHED brings the server's QPN, Q_Key and
// address; the client then sends one 4-byte SEND with immediate carrying
// its QPN, which the server receives behind the GRH.
func TestRDMACMUD(t *testing.T) {
	addr, ctx := testutil.CMAddress(t)
	srv, cli := newCMSide(t, ctx), newCMSide(t, ctx)
	udConfig := func(s *cmSide) verbs.QPConfig {
		return verbs.QPConfig{Type: verbs.QPTypeUD, SendCQ: s.scq, RecvCQ: s.rcq, Caps: verbs.QPCaps{MaxSendWR: 8, MaxRecvWR: 8}}
	}
	sch, lis, dst := listenCM(t, (*verbs.EventChannel).CreateUDPID, addr)

	type accepted struct {
		id  *verbs.CMID
		qp  *verbs.QP
		wc  verbs.WC
		err error
	}
	acc := make(chan accepted, 1)
	go func() {
		var a accepted
		defer func() { acc <- a }()
		ev, err := nextRequest(sch, time.Now().Add(5*time.Second))
		if a.err = err; err != nil {
			return
		}
		a.id = ev.ID
		if a.qp, a.err = ev.ID.CreateQP(srv.pd, udConfig(srv)); a.err != nil {
			return
		}
		if a.err = a.qp.PostRecv(1, srv.mr, 0, verbs.GRHSize+4); a.err != nil {
			return
		}
		if a.err = ev.ID.Accept(verbs.ConnParam{}); a.err != nil {
			return
		}
		a.wc, a.err = srv.rcq.Wait(5 * time.Second) // the client's QPN (no ESTABLISHED on a SIDR server)
	}()

	cch, id := resolveCM(t, (*verbs.EventChannel).CreateUDPID, dst)
	qp, err := id.CreateQP(cli.pd, udConfig(cli))
	if err != nil {
		t.Fatal(err)
	}
	p, err := id.ConnectUD(time.Now().Add(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if p.QKey != verbs.CMUDPQKey || !p.AH.UseGRH || p.AH.Port != 1 {
		t.Errorf("UD parameters %+v: want Q_Key 0x%x, a GRH (RoCE), port 1", p, verbs.CMUDPQKey)
	}
	ah, err := cli.pd.CreateAH(p.AH)
	if err != nil {
		t.Fatal(err)
	}
	if err := qp.PostSendUD(verbs.SendWR{WRID: 3, Op: verbs.OpSendWithImm, MR: cli.mr, Len: 4, Imm: qp.QPN(), Signaled: true},
		verbs.UDDest{AH: ah, QPN: p.QPN, QKey: p.QKey}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.scq.Wait(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	a := <-acc
	if a.err != nil {
		t.Fatal(a.err)
	}
	if p.QPN != a.qp.QPN() {
		t.Errorf("ESTABLISHED names QPN 0x%x, the server's QP is 0x%x", p.QPN, a.qp.QPN())
	}
	if !a.wc.HasImm || a.wc.Imm != qp.QPN() || a.wc.SrcQP != qp.QPN() || a.wc.ByteLen != verbs.GRHSize+4 {
		t.Errorf("server's completion %+v: want immediate and source QP 0x%x, %d bytes", a.wc, qp.QPN(), verbs.GRHSize+4)
	}
	closeAll(t, ah, qp, id, cch, a.qp, a.id, lis, sch)
}
