package verbs_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestRDMAUDSend sends between two UD QPs through address handles and finds
// the payload after the 40-byte GRH of the receive buffer.
func TestRDMAUDSend(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	port, err := ctx.QueryPort(testutil.Port)
	if err != nil {
		t.Fatal(err)
	}
	const bufSize = 2 * 8192
	a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: bufSize, Type: verbs.QPTypeUD})
	if a.QP.Type() != verbs.QPTypeUD || a.Peer.AH == nil || a.Peer.QPN != b.QP.QPN() {
		t.Fatalf("UD pair: type %s, peer %+v", a.QP.Type(), a.Peer)
	}
	for _, n := range []int{1, 2, 63, 1024, port.ActiveMTU} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			const roff = 8192
			recv := b.Buf.Bytes()[roff : roff+verbs.GRHSize+n]
			clear(recv)
			src := a.Buf.Bytes()[:n]
			fill(src, n)
			if err := b.QP.PostRecv(7, b.MR, roff, n+verbs.GRHSize); err != nil {
				t.Fatal(err)
			}
			if err := a.QP.PostSendUD(verbs.SendWR{WRID: uint64(n), Op: verbs.OpSend, MR: a.MR, Len: n, Signaled: true}, a.Peer); err != nil {
				t.Fatal(err)
			}
			wc, err := a.SendCQ.Wait(waitFor)
			if err != nil {
				t.Fatal(err)
			}
			if wc.WRID != uint64(n) {
				t.Fatalf("send wr_id %d, want %d", wc.WRID, n)
			}
			rwc, err := b.RecvCQ.Wait(waitFor)
			if err != nil {
				t.Fatal(err)
			}
			if rwc.WRID != 7 || int(rwc.ByteLen) != n+verbs.GRHSize || rwc.SrcQP != a.QP.QPN() {
				t.Fatalf("receive completion %+v: want wr_id 7, %d bytes (payload + GRH), src qp 0x%x", rwc, n+verbs.GRHSize, a.QP.QPN())
			}
			if !bytes.Equal(recv[verbs.GRHSize:], src) {
				t.Fatalf("UD SEND of %d bytes: payload after the GRH differs from the source", n)
			}
		})
	}
	t.Run("wrong-qkey-dropped", func(t *testing.T) {
		// a message with the wrong Q_Key is silently dropped: no receive completion
		if err := b.QP.PostRecv(8, b.MR, 8192, 64+verbs.GRHSize); err != nil {
			t.Fatal(err)
		}
		dest := a.Peer
		dest.QKey ^= 0x1
		if err := a.QP.PostSendUD(verbs.SendWR{WRID: 9, Op: verbs.OpSend, MR: a.MR, Len: 64, Signaled: true}, dest); err != nil {
			t.Fatal(err)
		}
		if _, err := a.SendCQ.Wait(waitFor); err != nil {
			t.Fatal(err)
		}
		// then a good one: it must land in the receive posted above
		if err := a.QP.PostSendUD(verbs.SendWR{WRID: 10, Op: verbs.OpSend, MR: a.MR, Len: 32, Signaled: true}, a.Peer); err != nil {
			t.Fatal(err)
		}
		if _, err := a.SendCQ.Wait(waitFor); err != nil {
			t.Fatal(err)
		}
		rwc, err := b.RecvCQ.Wait(waitFor)
		if err != nil {
			t.Fatal(err)
		}
		if rwc.ByteLen != 32+verbs.GRHSize {
			t.Fatalf("received %d bytes, want the good 32-byte message (+GRH): the wrong Q_Key was accepted", rwc.ByteLen)
		}
	})
	// rxe dereferences the (absent) address handle of such a work request
	if err := a.QP.PostSend(verbs.SendWR{Op: verbs.OpSend, MR: a.MR, Len: 8}); err == nil {
		t.Fatal("PostSend accepted a UD QP (no address handle)")
	}
	if err := a.QP.PostSendUD(verbs.SendWR{Op: verbs.OpWrite, MR: a.MR, Len: 8}, a.Peer); err == nil {
		t.Fatal("PostSendUD accepted an RDMA WRITE")
	}
}

// TestRDMAUCExchange runs SEND and RDMA WRITE on connected UC QPs (moved to
// RTR/RTS without the RC-only attributes).
func TestRDMAUCExchange(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	const max = 1 << 16
	a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 2 * max, Access: verbs.AccessRemoteWrite, Type: verbs.QPTypeUC})
	if a.QP.Type() != verbs.QPTypeUC {
		t.Fatalf("type %s, want UC", a.QP.Type())
	}
	for _, op := range []string{"send", "write"} {
		for _, n := range []int{1, 4096, 4097, max} {
			t.Run(fmt.Sprintf("%s/%d", op, n), func(t *testing.T) {
				src, dst := a.Buf.Bytes()[:n], b.Buf.Bytes()[max:max+n]
				clear(dst)
				fill(src, n)
				wr := verbs.SendWR{WRID: uint64(n), Op: verbs.OpSend, MR: a.MR, Len: n, Signaled: true}
				if op == "send" {
					if err := b.QP.PostRecv(1, b.MR, max, n); err != nil {
						t.Fatal(err)
					}
				} else {
					wr.Op, wr.RemoteAddr, wr.RKey = verbs.OpWrite, b.MR.Addr()+max, b.MR.RKey()
				}
				if err := a.QP.PostSend(wr); err != nil {
					t.Fatal(err)
				}
				if _, err := a.SendCQ.Wait(waitFor); err != nil {
					t.Fatal(err)
				}
				if op == "send" {
					rwc, err := b.RecvCQ.Wait(waitFor)
					if err != nil {
						t.Fatal(err)
					}
					if int(rwc.ByteLen) != n {
						t.Fatalf("received %d bytes, want %d", rwc.ByteLen, n)
					}
				} else {
					// no ack on UC: the send completion does not mean the data landed
					deadline := time.Now().Add(waitFor)
					for !bytes.Equal(src, dst) && time.Now().Before(deadline) {
						time.Sleep(time.Millisecond)
					}
				}
				if !bytes.Equal(src, dst) {
					t.Fatalf("UC %s of %d bytes: destination differs from source", op, n)
				}
			})
		}
	}
	if err := a.QP.PostSend(verbs.SendWR{Op: verbs.OpRead, MR: a.MR, Len: 8, RemoteAddr: b.MR.Addr(), RKey: b.MR.RKey()}); err == nil ||
		!strings.Contains(err.Error(), "not supported on a UC QP") {
		t.Fatalf("RDMA READ on UC: err %v, want a refusal", err)
	}
}
