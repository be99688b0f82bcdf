package verbs_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

const waitFor = 10 * time.Second

func TestRDMADevice(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	t.Logf("device %s", ctx.Name())
	da, err := ctx.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	if da.PhysPortCnt < 1 || da.MaxQPWR < 1 || da.MaxCQE < 1 {
		t.Fatalf("implausible device attributes: %+v", da)
	}
	pa, err := ctx.QueryPort(testutil.Port)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("port 1: %s, %s, active MTU %d, %s %s", pa.State, pa.LinkLayer, pa.ActiveMTU, pa.Width, pa.Speed)
	if !pa.Active {
		t.Fatalf("port 1 state %s, want PORT_ACTIVE", pa.State)
	}
	tbl, err := ctx.GIDTable(testutil.Port)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range tbl {
		t.Logf("GID %d %s %s %s", g.Index, g.Type, g.GID, g.Netdev)
	}
	if strings.HasPrefix(ctx.Name(), "rxe") {
		if !ctx.IsSoftware() {
			t.Errorf("%s not flagged as software RDMA", ctx.Name())
		}
		if pa.LinkLayer != "Ethernet" {
			t.Errorf("rxe link layer %s, want Ethernet", pa.LinkLayer)
		}
		g, err := ctx.GID(testutil.Port, 1)
		if err != nil {
			t.Fatal(err)
		}
		if g.Type != verbs.GIDTypeRoCEv2 || g.GID.String() != "::ffff:127.0.0.1" {
			t.Errorf("GID 1 = %s %s, want RoCE v2 ::ffff:127.0.0.1 (rxe on lo)", g.Type, g.GID)
		}
		if pa.ActiveMTU != 4096 {
			t.Errorf("active MTU %d, want 4096 (rxe on lo)", pa.ActiveMTU)
		}
	}
}

func TestRDMABadInputs(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	t.Run("unknown device", func(t *testing.T) {
		_, err := verbs.Open("nosuchdev9")
		var nf *verbs.DeviceNotFoundError
		if !errors.As(err, &nf) || !strings.Contains(err.Error(), ctx.Name()) {
			t.Fatalf("Open(nosuchdev9) = %v, want DeviceNotFoundError listing %s", err, ctx.Name())
		}
	})
	t.Run("port 2", func(t *testing.T) {
		_, err := ctx.QueryPort(2)
		if err == nil || !strings.Contains(err.Error(), "port 2 invalid") || !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("QueryPort(2) = %v, want an EINVAL naming port 2 and the port count", err)
		}
	})
	t.Run("GID index out of range", func(t *testing.T) {
		_, err := ctx.GID(testutil.Port, 999)
		if err == nil || !strings.Contains(err.Error(), "index 999") || !strings.Contains(err.Error(), "valid:") {
			t.Fatalf("GID(999) = %v, want an error naming 999 and the valid entries", err)
		}
	})
	t.Run("context close with open objects", func(t *testing.T) {
		pd, err := ctx.AllocPD()
		if err != nil {
			t.Fatal(err)
		}
		if err := ctx.Close(); err == nil || !strings.Contains(err.Error(), "still open") {
			t.Fatalf("Close with an open PD = %v", err)
		}
		if err := pd.Close(); err != nil {
			t.Fatal(err)
		}
		if err := pd.Close(); err != nil {
			t.Fatalf("second Close = %v, want nil (idempotent)", err)
		}
	})
}

var sizes = []int{1, 2, 63, 4096, 4097, 65536, 1 << 20}

func fill(b []byte, seed int) {
	for i := range b {
		b[i] = byte(i*7 + seed)
	}
}

func TestRDMAExchange(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	const max = 1 << 20
	a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 2 * max,
		Access: verbs.AccessRemoteWrite | verbs.AccessRemoteRead})
	for _, op := range []string{"send", "write", "write_imm", "read"} {
		for _, n := range sizes {
			t.Run(fmt.Sprintf("%s/%d", op, n), func(t *testing.T) {
				src, dst := a.Buf.Bytes()[:n], b.Buf.Bytes()[max:max+n]
				clear(dst)
				fill(src, n)
				wr := verbs.SendWR{WRID: uint64(n), MR: a.MR, Len: n, Signaled: true}
				switch op {
				case "send":
					if err := b.QP.PostRecv(1, b.MR, max, n); err != nil {
						t.Fatal(err)
					}
					wr.Op = verbs.OpSend
				case "write":
					wr.Op, wr.RemoteAddr, wr.RKey = verbs.OpWrite, b.MR.Addr()+max, b.MR.RKey()
				case "write_imm":
					if err := b.QP.PostRecv(2, b.MR, 0, 0); err != nil {
						t.Fatal(err)
					}
					wr.Op, wr.RemoteAddr, wr.RKey, wr.Imm = verbs.OpWriteWithImm, b.MR.Addr()+max, b.MR.RKey(), 0xabcd0000|uint32(n&0xffff)
				case "read": // b reads from a
					fill(a.Buf.Bytes()[max:max+n], n+1)
					src = a.Buf.Bytes()[max : max+n]
					wr = verbs.SendWR{WRID: uint64(n), Op: verbs.OpRead, MR: b.MR, Offset: max, Len: n,
						RemoteAddr: a.MR.Addr() + max, RKey: a.MR.RKey(), Signaled: true}
				}
				poster, target := a, b
				if op == "read" {
					poster, target = b, a
				}
				if err := poster.QP.PostSend(wr); err != nil {
					t.Fatal(err)
				}
				wc, err := poster.SendCQ.Wait(waitFor)
				if err != nil {
					t.Fatal(err)
				}
				if wc.WRID != uint64(n) {
					t.Fatalf("wr_id %d, want %d", wc.WRID, n)
				}
				wantOp := wr.Op
				if op == "write_imm" {
					wantOp = verbs.OpWrite // a send completion cannot tell WRITE_WITH_IMM from WRITE
				}
				if wc.Recv || wc.Opcode != wantOp {
					t.Fatalf("send completion opcode %s (recv %v), want %s", wc.Opcode, wc.Recv, wantOp)
				}
				if op == "send" || op == "write_imm" {
					rwc, err := target.RecvCQ.Wait(waitFor)
					if err != nil {
						t.Fatal(err)
					}
					if op == "send" && int(rwc.ByteLen) != n {
						t.Fatalf("received %d bytes, want %d", rwc.ByteLen, n)
					}
					if !rwc.Recv || rwc.Opcode != wr.Op {
						t.Fatalf("receive completion opcode %s (recv %v), want %s", rwc.Opcode, rwc.Recv, wr.Op)
					}
					if op == "write_imm" && (!rwc.HasImm || rwc.Imm != wr.Imm) {
						t.Fatalf("write_imm completion %+v, want imm 0x%x", rwc, wr.Imm)
					}
				}
				if !bytes.Equal(src, dst) {
					t.Fatalf("%s of %d bytes: destination differs from source", op, n)
				}
			})
		}
	}
}

func TestRDMAWrongRKey(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 4096, Access: verbs.AccessRemoteWrite})
	err := a.QP.PostSend(verbs.SendWR{WRID: 42, Op: verbs.OpWrite, MR: a.MR, Len: 64,
		RemoteAddr: b.MR.Addr(), RKey: b.MR.RKey() + 1, Signaled: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.SendCQ.Wait(waitFor)
	var wce *verbs.WCError
	if !errors.As(err, &wce) {
		t.Fatalf("completion error %v, want *verbs.WCError", err)
	}
	if wce.Status != verbs.WCRemAccessErr || wce.WRID != 42 || wce.QPN != a.QP.QPN() {
		t.Fatalf("WCError %+v, want IBV_WC_REM_ACCESS_ERR for wr_id 42 on qpn 0x%x", wce, a.QP.QPN())
	}
	if wce.Opcode != verbs.OpWrite {
		t.Errorf("WCError opcode %s, want RDMA_WRITE (the posted operation)", wce.Opcode)
	}
	if !strings.Contains(err.Error(), "IBV_WC_REM_ACCESS_ERR") {
		t.Fatalf("message %q does not name the status", err)
	}
	t.Logf("wrong rkey: %v", err)
}

// TestRDMALeastPrivilege: a WRITE into an MR registered without
// REMOTE_WRITE fails; the peer's grant is what protects it.
func TestRDMALeastPrivilege(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 4096, Access: verbs.AccessRemoteRead})
	if err := a.QP.PostSend(verbs.SendWR{Op: verbs.OpWrite, MR: a.MR, Len: 8, RemoteAddr: b.MR.Addr(), RKey: b.MR.RKey(), Signaled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendCQ.Wait(waitFor); err == nil {
		t.Fatal("RDMA WRITE into a read-only MR succeeded")
	}
}

// TestRDMAMemlock drops CAP_IPC_LOCK on this thread and lowers
// RLIMIT_MEMLOCK, then registers more than the limit.
func TestRDMAMemlock(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	defer pd.Close()
	buf, err := verbs.AllocBuffer(1<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()

	// Changing credentials makes the kernel refuse uverbs writes from this
	// thread for good (ib_safe_file_access), so do it on a thread of its own
	// that dies with its goroutine: never unlock it.
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		errc <- registerWithoutIPCLock(pd, buf)
	}()
	err = <-errc
	var me *verbs.MemlockError
	if !errors.As(err, &me) || me.Current != 64<<10 || me.Needed < 1<<20 {
		t.Fatalf("error %v, want *MemlockError with current 65536 and needed >= 1 MiB", err)
	}
	t.Logf("memlock: %v", err)
}

// registerWithoutIPCLock drops CAP_IPC_LOCK on the calling (locked) thread,
// lowers RLIMIT_MEMLOCK to 64 KiB and registers buf.
func registerWithoutIPCLock(pd *verbs.PD, buf *verbs.Buffer) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var caps [2]unix.CapUserData
	if err := unix.Capget(&hdr, &caps[0]); err != nil {
		return err
	}
	caps[0].Effective &^= 1 << unix.CAP_IPC_LOCK
	if err := unix.Capset(&hdr, &caps[0]); err != nil {
		return err
	}
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &old); err != nil {
		return err
	}
	if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &unix.Rlimit{Cur: 64 << 10, Max: old.Max}); err != nil {
		return err
	}
	defer unix.Setrlimit(unix.RLIMIT_MEMLOCK, &old)
	mr, err := pd.RegisterMR(buf, 0, buf.Len(), verbs.AccessLocalWrite)
	if err == nil {
		mr.Close()
		return errors.New("registering 1 MiB under a 64 KiB memlock limit succeeded")
	}
	return err
}

func TestRDMAEngineLatency(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	for _, tt := range []struct {
		name   string
		op     verbs.Opcode
		access verbs.Access
		server bool
	}{
		{"send", verbs.OpSend, 0, true},
		{"write", verbs.OpWrite, verbs.AccessRemoteWrite, true},
		{"write_imm", verbs.OpWriteWithImm, verbs.AccessRemoteWrite, true},
		{"read", verbs.OpRead, verbs.AccessRemoteRead, false},
		{"fetch_add", verbs.OpFetchAdd, verbs.AccessRemoteAtomic, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const size, iters = 64, 200
			a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 8192, Access: tt.access})
			mk := func(s, peer *testutil.Side) *verbs.Engine {
				e, err := verbs.NewEngine(verbs.EngineConfig{QP: s.QP, MR: s.MR, Op: tt.op, Size: size, RecvOffset: 4096,
					RemoteAddr: peer.MR.Addr() + 4096, RKey: peer.MR.RKey(), TxDepth: 1, CQMod: 1, RxDepth: 4,
					Timeout: 5 * time.Second, Samples: iters})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { e.Close() })
				if err := e.PostRecvs(4); err != nil {
					t.Fatal(err)
				}
				return e
			}
			cli, srv := mk(a, b), mk(b, a)
			srv.SetStop(iters)
			done := make(chan error, 1)
			if tt.server {
				go func() {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					done <- srv.LatServer()
				}()
			} else {
				if err := srv.LatServer(); err == nil || !strings.Contains(err.Error(), "no responder loop") {
					t.Fatalf("LatServer for %s = %v, want a refusal", tt.op, err)
				}
				done <- nil
			}
			if err := cli.LatClient(iters); err != nil {
				srv.Abort()
				<-done
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("server: %v", err)
			}
			s := cli.Samples()
			if len(s) != iters {
				t.Fatalf("%d samples, want %d", len(s), iters)
			}
			for i, v := range s {
				if v == 0 || v > uint64(5*time.Second) {
					t.Fatalf("sample %d = %d ns", i, v)
				}
			}
			t.Logf("%s: first RTT %d ns, last %d ns", tt.name, s[0], s[len(s)-1])
		})
	}
}

func TestRDMAEngineBandwidth(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	for _, tt := range []struct {
		name   string
		op     verbs.Opcode
		access verbs.Access
	}{
		{"send", verbs.OpSend, 0},
		{"write", verbs.OpWrite, verbs.AccessRemoteWrite},
		{"read", verbs.OpRead, verbs.AccessRemoteRead},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const size, n, depth = 4096, 1000, 32
			a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 2 * size, Access: tt.access, Depth: 128})
			mk := func(s, peer *testutil.Side) *verbs.Engine {
				e, err := verbs.NewEngine(verbs.EngineConfig{QP: s.QP, MR: s.MR, Op: tt.op, Size: size, RecvOffset: size,
					RemoteAddr: peer.MR.Addr() + size, RKey: peer.MR.RKey(), TxDepth: depth, CQMod: 8, RxDepth: 128,
					Timeout: 5 * time.Second, Samples: 1024})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { e.Close() })
				return e
			}
			cli, srv := mk(a, b), mk(b, a)
			done := make(chan error, 1)
			if tt.op == verbs.OpSend {
				if err := srv.PostRecvs(128); err != nil {
					t.Fatal(err)
				}
				srv.SetStop(n)
				go func() { done <- srv.BWServer() }()
			} else {
				done <- nil
			}
			cli.SetTarget(n)
			for cli.Completed() < n {
				if _, err := cli.BWClient(verbs.Now() + int64(time.Second)); err != nil {
					srv.Abort()
					t.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			first, last := cli.Span()
			if cli.Posted() != n || last <= first {
				t.Fatalf("posted %d, span %d..%d", cli.Posted(), first, last)
			}
			if got := len(cli.Samples()); got != n/8 {
				t.Fatalf("%d completion samples, want %d (one per signaled send)", got, n/8)
			}
			mbps := float64(n*size) / float64(last-first) * 1e3
			t.Logf("%s: %d x %d B in %.2f ms = %.1f MB/s", tt.name, n, size, float64(last-first)/1e6, mbps)
		})
	}
}

func BenchmarkRDMAEngineSendLat(b *testing.B) {
	ctx := testutil.RequireRDMA(b)
	a, s := testutil.NewPair(b, ctx, testutil.PairConfig{BufSize: 8192})
	mk := func(x *testutil.Side) *verbs.Engine {
		e, err := verbs.NewEngine(verbs.EngineConfig{QP: x.QP, MR: x.MR, Op: verbs.OpSend, Size: 2, RecvOffset: 4096,
			TxDepth: 1, CQMod: 1, RxDepth: 4, Timeout: 5 * time.Second, Samples: 1024})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		if err := e.PostRecvs(4); err != nil {
			b.Fatal(err)
		}
		return e
	}
	cli, srv := mk(a), mk(s)
	srv.SetStop(int64(b.N))
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		done <- srv.LatServer()
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	for left := b.N; left > 0; {
		n := min(left, 1024)
		cli.ResetSamples()
		if err := cli.LatClient(n); err != nil {
			srv.Abort()
			b.Fatal(err)
		}
		left -= n
	}
	b.StopTimer()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

func TestRDMACompletionChannel(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	cq, err := ctx.CreateCQ(16, true)
	if err != nil {
		t.Fatal(err)
	}
	defer cq.Close()
	if err := cq.ReqNotify(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cq.WaitEvent(200 * time.Millisecond); !errors.Is(err, verbs.ErrTimeout) {
		t.Fatalf("WaitEvent on an idle CQ = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
		t.Fatalf("WaitEvent timeout took %v, want about 200ms", d)
	}
	// A receive completion raises an event on a CQ with a channel.
	a, b := testutil.NewPair(t, ctx, testutil.PairConfig{BufSize: 4096, Channel: true})
	if err := b.RecvCQ.ReqNotify(); err != nil {
		t.Fatal(err)
	}
	if err := b.QP.PostRecv(7, b.MR, 0, 64); err != nil {
		t.Fatal(err)
	}
	if err := a.QP.PostSend(verbs.SendWR{Op: verbs.OpSend, MR: a.MR, Len: 64, Signaled: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.RecvCQ.WaitEvent(5 * time.Second); err != nil {
		t.Fatalf("no completion event: %v", err)
	}
	if wc, err := b.RecvCQ.Wait(time.Second); err != nil || wc.WRID != 7 || wc.ByteLen != 64 {
		t.Fatalf("completion after the event: %+v, %v; want wr_id 7, 64 bytes", wc, err)
	}
}

func TestRDMAHugePages(t *testing.T) {
	ctx := testutil.RequireRDMA(t)
	const nr = "/proc/sys/vm/nr_hugepages"
	if os.Geteuid() != 0 {
		t.Skip("needs root to reserve huge pages")
	}
	old, err := os.ReadFile(nr)
	if err != nil {
		t.Skipf("no huge page support: %v", err)
	}
	if err := os.WriteFile(nr, []byte("4"), 0); err != nil {
		t.Skipf("cannot reserve huge pages: %v", err)
	}
	defer os.WriteFile(nr, old, 0)
	buf, err := verbs.AllocBuffer(verbs.HugePageSize(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	if buf.Len() != verbs.HugePageSize() || buf.Addr()%uint64(verbs.HugePageSize()) != 0 {
		t.Fatalf("huge buffer of %d bytes at 0x%x, want 2 MiB aligned", buf.Len(), buf.Addr())
	}
	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	defer pd.Close()
	mr, err := pd.RegisterMR(buf, 0, buf.Len(), verbs.AccessLocalWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := mr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mr.Close(); err != nil {
		t.Fatalf("second MR Close = %v", err)
	}
}
