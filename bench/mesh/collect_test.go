package mesh

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// coordinatorFor starts rank 0's coordinator of an n-rank run on loopback.
func coordinatorFor(t *testing.T, n int) (*coordinator, string, []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("0123456789abcdef0123456789abcdef")
	co := newCoordinator(ln, key, n)
	go co.serve()
	t.Cleanup(co.close)
	return co, ln.Addr().String(), key
}

func dialT(t *testing.T, addr string, key []byte, rank int) *link {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := dialLink(ctx, addr, key, rank)
	if err != nil {
		t.Fatalf("rank %d: %v", rank, err)
	}
	t.Cleanup(l.close)
	return l
}

// A rank that hangs (its link open, no barrier) holds the others for one
// barrier timeout only; from then on it is late and let through at once.
func TestBarrierHungRank(t *testing.T) {
	co, addr, key := coordinatorFor(t, 3)
	l1, l2 := dialT(t, addr, key, 1), dialT(t, addr, key, 2)
	co.expectAll()
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- l1.barrier(ctx, 1, 10*time.Second) }()
	t0 := time.Now()
	if err := co.barrier(ctx, 1, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < 250*time.Millisecond || d > 5*time.Second {
		t.Errorf("barrier took %v, want about the 300ms timeout", d)
	}
	if err := <-done; err != nil {
		t.Fatalf("rank 1 not let through: %v", err)
	}
	if err := l2.barrier(ctx, 1, 2*time.Second); err != nil {
		t.Fatalf("late rank 2 not let through at once: %v", err)
	}
	ws, unsynced := co.syncState()
	if unsynced != 1 || len(ws) != 1 || !strings.Contains(ws[0], "rank 2 did not reach the barrier before round 1") {
		t.Errorf("unsynced %d, warnings %q", unsynced, ws)
	}
	// the next barrier does not wait for the late rank
	go func() { done <- l1.barrier(ctx, 2, 10*time.Second) }()
	t0 = time.Now()
	if err := co.barrier(ctx, 2, 5*time.Second); err != nil || time.Since(t0) > 3*time.Second {
		t.Fatalf("barrier 2: %v after %v", err, time.Since(t0))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A rank whose link closes is lost at once: barriers and the report wait
// go on without it.
func TestCoordinatorLostRank(t *testing.T) {
	co, addr, key := coordinatorFor(t, 3)
	l1, l2 := dialT(t, addr, key, 1), dialT(t, addr, key, 2)
	co.expectAll()
	l2.close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go l1.barrier(ctx, 1, 10*time.Second) //nolint:errcheck
	if err := co.barrier(ctx, 1, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	co.add(Report{Rank: 0, UnsyncedFrom: -1})
	errc := make(chan error, 1)
	go func() { errc <- l1.deliver(ctx, Report{Rank: 1, UnsyncedFrom: -1}) }()
	got, lost := co.wait(ctx)
	if ctx.Err() != nil {
		t.Fatal("the report wait waited for the dead rank")
	}
	if err := <-errc; err != nil {
		t.Errorf("rank 1's report: %v", err)
	}
	if len(got) != 2 || !strings.Contains(lost[2], "link to rank 0 closed") {
		t.Errorf("reports %d, lost %v", len(got), lost)
	}
}

// A peer without the run key gets no further than the challenge; a rank
// cannot register twice.
func TestCoordinatorAuth(t *testing.T) {
	co, addr, key := coordinatorFor(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := dialLink(ctx, addr, []byte("wrong key"), 1); err == nil {
		t.Error("a wrong key was accepted")
	}
	dialT(t, addr, key, 1)
	if _, err := dialLink(ctx, addr, key, 1); err == nil {
		t.Error("rank 1 registered twice")
	}
	if _, err := dialLink(ctx, addr, key, 0); err == nil {
		t.Error("rank 0 (the coordinator itself) accepted as a peer")
	}
	co.mu.Lock()
	defer co.mu.Unlock()
	if len(co.peers) != 1 {
		t.Errorf("%d peers registered, want 1", len(co.peers))
	}
}

// FuzzLink feeds arbitrary bytes to rank 0 on an authenticated link: it
// must neither panic nor hang, and must end with the rank lost or its
// report in.
func FuzzLink(f *testing.F) {
	f.Add([]byte{'B', 0, 0, 0, 1})
	f.Add([]byte{'R', 0, 0, 0, 2, '{', '}'})
	f.Add([]byte(`R` + "\x00\x00\x00\x1f" + `{"rank":1,"unsynced_from_round":-1}`))
	f.Add([]byte{'R', 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{'Z', 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		key := []byte("k")
		co := newCoordinator(nil, key, 2)
		a, b := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			co.handle(a)
		}()
		nonce := make([]byte, 32)
		if _, err := io.ReadFull(b, nonce); err != nil {
			t.Fatal(err)
		}
		msg := append(mac(key, nonce, 1), 0, 0, 0, 1)
		if _, err := b.Write(msg); err != nil {
			t.Fatal(err)
		}
		var acc [5]byte
		if _, err := io.ReadFull(b, acc[:]); err != nil || acc[0] != frameAccept {
			t.Fatalf("not accepted: %v %v", acc, err)
		}
		go io.Copy(io.Discard, b) //nolint:errcheck // 'G' frames
		b.SetWriteDeadline(time.Now().Add(time.Second))
		b.Write(data) //nolint:errcheck
		b.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("rank 0 hangs on the link")
		}
		co.mu.Lock()
		defer co.mu.Unlock()
		_, in := co.got[1]
		if !in && co.gone[1] == "" {
			t.Errorf("rank 1 neither reported nor lost after %q", data)
		}
		if in && binary.BigEndian.Uint32(data[1:5]) > maxReport {
			t.Error("an oversized report accepted")
		}
	})
}
