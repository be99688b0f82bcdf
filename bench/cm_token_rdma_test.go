package bench

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestRDMACMToken: the server's rdma_cm listener rejects a well-formed
// connect request with another token, keeps waiting, and accepts the one
// with the token it issued over the control session.
func TestRDMACMToken(t *testing.T) {
	_, cmctx := testutil.CMAddress(t)
	addr := startServer(t)
	spec := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 200, RDMACM: true}})[0]
	c, info := startCMTestInfo(t, addr, spec)
	defer c.Close()
	token, err := endpoint.CMTokenFrom(info.CMToken)
	if err != nil {
		t.Fatal(err)
	}
	dst := netip.AddrPortFrom(netip.MustParseAddr(info.CMAddr), uint16(info.CMPort))
	pd, err := cmctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	defer pd.Close()
	connect := func(tok [proto.CMTokenLen]byte) error {
		ch, err := verbs.NewEventChannel()
		if err != nil {
			t.Fatal(err)
		}
		defer ch.Close()
		id, err := ch.CreateID()
		if err != nil {
			t.Fatal(err)
		}
		defer id.Close()
		if err := id.Resolve(netip.Addr{}, dst, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		cq, err := cmctx.CreateCQ(4, false)
		if err != nil {
			t.Fatal(err)
		}
		defer cq.Close()
		qp, err := id.CreateQP(pd, verbs.QPConfig{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq, Caps: verbs.QPCaps{MaxSendWR: 1, MaxRecvWR: 1}})
		if err != nil {
			t.Fatal(err)
		}
		defer qp.Close()
		return id.Connect(verbs.ConnParam{PrivateData: endpoint.CMPrivate{Index: 0, Count: 1, Token: tok}.Marshal()}, time.Now().Add(5*time.Second))
	}
	wrong := token
	wrong[0] ^= 0xff
	var ee *verbs.EventError
	if err := connect(wrong); !errors.As(err, &ee) || ee.Got != verbs.CMEventRejected {
		t.Fatalf("connect request with another token: %v, want REJECTED", err)
	}
	if err := connect(token); err != nil {
		t.Fatalf("connect request with the test's token (after a rejected one): %v", err)
	}
	c.SendError(errors.New("test client gives up"))
}
