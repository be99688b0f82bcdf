package verbs_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// cmSide is one end of an rdma_cm connection in the tests: PD, CQs and a
// registered buffer on librdmacm's context.
type cmSide struct {
	pd       *verbs.PD
	scq, rcq *verbs.CQ
	buf      *verbs.Buffer
	mr       *verbs.MR
}

func newCMSide(t *testing.T, ctx *verbs.Context) *cmSide {
	t.Helper()
	s := &cmSide{}
	var err error
	if s.pd, err = ctx.AllocPD(); err != nil {
		t.Fatal(err)
	}
	if s.scq, err = ctx.CreateCQ(16, false); err != nil {
		t.Fatal(err)
	}
	if s.rcq, err = ctx.CreateCQ(16, false); err != nil {
		t.Fatal(err)
	}
	if s.buf, err = verbs.AllocBuffer(4096, false); err != nil {
		t.Fatal(err)
	}
	if s.mr, err = s.pd.RegisterMR(s.buf, 0, 4096, verbs.AccessLocalWrite); err != nil {
		t.Fatal(err)
	}
	for _, c := range []interface{ Close() error }{s.pd, s.scq, s.rcq, s.buf, s.mr} { // cleanups run last first
		testutil.CloseAtEnd(t, fmt.Sprintf("%T", c), c)
	}
	return s
}

func (s *cmSide) qpConfig() verbs.QPConfig {
	return verbs.QPConfig{Type: verbs.QPTypeRC, SendCQ: s.scq, RecvCQ: s.rcq, Caps: verbs.QPCaps{MaxSendWR: 8, MaxRecvWR: 8}}
}

// closeAll closes in order, reporting errors (QPs before their ids, ids
// before their channel).
func closeAll(t *testing.T, cs ...interface{ Close() error }) {
	t.Helper()
	for _, c := range cs {
		if err := c.Close(); err != nil {
			t.Errorf("close %T: %v", c, err)
		}
	}
}

// listenCM creates an event channel and an id on it with create, binds the
// id to addr (an ephemeral port) and listens; dst is where it listens.
func listenCM(t *testing.T, create func(*verbs.EventChannel) (*verbs.CMID, error), addr netip.Addr) (ch *verbs.EventChannel, lis *verbs.CMID, dst netip.AddrPort) {
	t.Helper()
	ch, err := verbs.NewEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	if lis, err = create(ch); err != nil {
		t.Fatal(err)
	}
	if err := lis.Bind(netip.AddrPortFrom(addr, 0)); err != nil {
		t.Fatal(err)
	}
	if err := lis.Listen(4); err != nil {
		t.Fatal(err)
	}
	if dst = netip.AddrPortFrom(addr, uint16(lis.LocalPort())); dst.Port() == 0 {
		t.Fatal("listener has no port")
	}
	return ch, lis, dst
}

// resolveCM creates an event channel and an id on it with create, and
// resolves the address and route to dst.
func resolveCM(t *testing.T, create func(*verbs.EventChannel) (*verbs.CMID, error), dst netip.AddrPort) (*verbs.EventChannel, *verbs.CMID) {
	t.Helper()
	ch, err := verbs.NewEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	id, err := create(ch)
	if err != nil {
		t.Fatal(err)
	}
	if err := id.Resolve(netip.Addr{}, dst, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	return ch, id
}

// nextRequest waits until deadline for the next event on ch, which must be
// a CONNECT_REQUEST.
func nextRequest(ch *verbs.EventChannel, deadline time.Time) (verbs.CMEvent, error) {
	ev, err := ch.Next(deadline, nil)
	if err == nil && ev.Type != verbs.CMEventConnectRequest {
		err = errors.New("got " + ev.Type.String() + ", want CONNECT_REQUEST")
	}
	return ev, err
}

// TestRDMACMConnect connects an RC QP pair through rdma_cm on the device
// that has a non-loopback address (rxe1 on dummy0 in the guest): listen,
// connect with private data, accept, then SEND a message across.
func TestRDMACMConnect(t *testing.T) {
	addr, ctx := testutil.CMAddress(t)
	srv, cli := newCMSide(t, ctx), newCMSide(t, ctx)
	sch, lis, dst := listenCM(t, (*verbs.EventChannel).CreateID, addr)
	if !lis.UsesContext(ctx) || lis.DeviceName() != ctx.Name() {
		t.Fatalf("listener bound to %q, want %s's context", lis.DeviceName(), ctx.Name())
	}

	// the server accepts in the background; its ids and QP outlive the goroutine
	type accepted struct {
		id   *verbs.CMID
		qp   *verbs.QP
		priv []byte
		err  error
	}
	acc := make(chan accepted, 1)
	go func() {
		var a accepted
		defer func() { acc <- a }()
		deadline := time.Now().Add(5 * time.Second)
		ev, err := nextRequest(sch, deadline)
		if a.err = err; err != nil {
			return
		}
		a.id, a.priv = ev.ID, ev.PrivateData
		if a.qp, a.err = ev.ID.CreateQP(srv.pd, srv.qpConfig()); a.err != nil {
			return
		}
		if a.err = a.qp.PostRecv(1, srv.mr, 0, 64); a.err != nil {
			return
		}
		if a.err = ev.ID.Accept(verbs.ConnParam{ResponderResources: 1, InitiatorDepth: 1}); a.err != nil {
			return
		}
		ev, a.err = sch.Next(deadline, nil)
		if a.err == nil && (ev.Type != verbs.CMEventEstablished || ev.ID != a.id) {
			a.err = errors.New("got " + ev.Type.String() + ", want ESTABLISHED")
		}
	}()

	cch, id := resolveCM(t, (*verbs.EventChannel).CreateID, dst)
	if id.DeviceName() != ctx.Name() || !id.UsesContext(ctx) {
		t.Fatalf("resolved to %q, want %s", id.DeviceName(), ctx.Name())
	}
	qp, err := id.CreateQP(cli.pd, cli.qpConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := id.CreateQP(cli.pd, cli.qpConfig()); err == nil {
		t.Error("a second CreateQP on one id succeeded")
	}
	priv := []byte("rdmabench-private")
	if err := id.Connect(verbs.ConnParam{PrivateData: priv, ResponderResources: 1, InitiatorDepth: 1}, time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	a := <-acc
	if a.err != nil {
		t.Fatal(a.err)
	}
	if !bytes.HasPrefix(a.priv, priv) {
		t.Errorf("server got private data %q, want prefix %q", a.priv, priv)
	}
	path, err := qp.Path()
	if err != nil {
		t.Fatal(err)
	}
	if path.MTU < 256 || path.Port != 1 {
		t.Errorf("path %+v: want a path MTU and port 1", path)
	}
	if err := qp.SetAccess(0); err != nil {
		t.Errorf("narrowing the access of a connected QP: %v", err)
	}
	msg := []byte("over rdma_cm")
	copy(cli.buf.Bytes(), msg)
	if err := qp.PostSend(verbs.SendWR{WRID: 7, Op: verbs.OpSend, MR: cli.mr, Len: len(msg), Signaled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.scq.Wait(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	wc, err := srv.rcq.Wait(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.buf.Bytes()[:wc.ByteLen]; !bytes.Equal(got, msg) {
		t.Fatalf("server received %q, want %q", got, msg)
	}

	// teardown order is enforced: an id with its QP open, a channel with ids
	if err := id.Close(); err == nil {
		t.Error("closing an id with its QP open succeeded")
	}
	if err := cch.Close(); err == nil {
		t.Error("closing a channel with open ids succeeded")
	}
	closeAll(t, qp, id, cch, a.qp, a.id, lis, sch)
	closeAll(t, cch, sch) // idempotent
}

// TestRDMACMErrors: every rdma_cm wait ends at its deadline, and failures
// name what failed.
func TestRDMACMErrors(t *testing.T) {
	addr, ctx := testutil.CMAddress(t)
	ch, err := verbs.NewEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(t, ch)

	t.Run("deadline", func(t *testing.T) {
		start := time.Now()
		_, err := ch.Next(time.Now().Add(300*time.Millisecond), nil)
		if !errors.Is(err, verbs.ErrTimeout) {
			t.Fatalf("Next on a quiet channel: %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d < 250*time.Millisecond || d > 2*time.Second {
			t.Errorf("Next waited %v for a 300 ms deadline", d)
		}
	})
	t.Run("abort", func(t *testing.T) {
		abort := make(chan struct{})
		close(abort)
		if _, err := ch.Next(time.Now().Add(time.Minute), abort); !errors.Is(err, verbs.ErrAborted) {
			t.Fatalf("Next with abort closed: %v, want ErrAborted", err)
		}
	})
	t.Run("no listener", func(t *testing.T) {
		id, err := ch.CreateID()
		if err != nil {
			t.Fatal(err)
		}
		defer closeAll(t, id)
		if err := id.Resolve(netip.Addr{}, netip.AddrPortFrom(addr, 9), 2*time.Second); err != nil {
			t.Fatal(err)
		}
		s := newCMSide(t, ctx)
		qp, err := id.CreateQP(s.pd, s.qpConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer closeAll(t, qp)
		start := time.Now()
		err = id.Connect(verbs.ConnParam{}, time.Now().Add(10*time.Second))
		var ee *verbs.EventError
		if !errors.As(err, &ee) || (ee.Got != verbs.CMEventRejected && ee.Got != verbs.CMEventUnreachable) {
			t.Fatalf("connect to a port nobody listens on: %v, want REJECTED or UNREACHABLE", err)
		}
		t.Logf("%v after %v", err, time.Since(start))
	})
	t.Run("PD from another context", func(t *testing.T) {
		other := testutil.RequireRDMA(t) // ibv_open_device's context, not librdmacm's
		pd, err := other.AllocPD()
		if err != nil {
			t.Fatal(err)
		}
		defer closeAll(t, pd)
		id, err := ch.CreateID()
		if err != nil {
			t.Fatal(err)
		}
		defer closeAll(t, id)
		if err := id.Resolve(netip.Addr{}, netip.AddrPortFrom(addr, 9), 2*time.Second); err != nil {
			t.Fatal(err)
		}
		cq, err := other.CreateCQ(4, false)
		if err != nil {
			t.Fatal(err)
		}
		defer closeAll(t, cq)
		_, err = id.CreateQP(pd, verbs.QPConfig{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq, Caps: verbs.QPCaps{MaxSendWR: 1, MaxRecvWR: 1}})
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("OpenCM")) {
			t.Fatalf("CreateQP with a foreign PD: %v, want an error that points to OpenCM", err)
		}
	})
	t.Run("unknown device", func(t *testing.T) {
		_, err := verbs.OpenCM("nosuch0")
		var nf *verbs.DeviceNotFoundError
		if !errors.As(err, &nf) {
			t.Fatalf("OpenCM(nosuch0): %v, want *DeviceNotFoundError", err)
		}
	})
}
