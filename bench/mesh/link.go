package mesh

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// link is a rank's connection to rank 0's coordinator (the protocol is in
// collect.go): the barriers between rounds and the report.
type link struct {
	nc      net.Conn
	wmu     sync.Mutex
	mu      sync.Mutex
	changed chan struct{} // closed (and replaced) on every change
	passed  int           // highest barrier round rank 0 let through (-1: none)
	done    bool          // rank 0 released the ranks ('D')
	kept    bool          // ... with this rank's report in the document
	err     error         // the link broke
}

// errLinkDone is rank 0 releasing the ranks while this one still waits at a
// barrier: rank 0 finished (or gave up) before this rank.
var errLinkDone = errors.New("rank 0 has already finished the run")

// dialLink connects to rank 0's coordinator at addr and authenticates as
// rank with the run key; ctx bounds the whole handshake.
func dialLink(ctx context.Context, addr string, key []byte, rank int) (*link, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) }) //nolint:errcheck
	defer stop()
	fail := func(what string, err error) (*link, error) {
		nc.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	nonce := make([]byte, 32)
	if _, err := io.ReadFull(nc, nonce); err != nil {
		return fail("challenge", err)
	}
	msg := append(mac(key, nonce, rank), 0, 0, 0, 0)
	binary.BigEndian.PutUint32(msg[32:], uint32(rank))
	if _, err := nc.Write(msg); err != nil {
		return fail("answer", err)
	}
	t, _, err := readFrame(nc)
	if err != nil || t != frameAccept {
		if err == nil {
			err = fmt.Errorf("frame type %d", t)
		}
		return fail("rank 0 did not accept this rank", err)
	}
	if !stop() {
		nc.Close()
		return nil, ctx.Err()
	}
	nc.SetDeadline(time.Time{}) //nolint:errcheck
	l := &link{nc: nc, changed: make(chan struct{}), passed: -1}
	go l.read()
	return l, nil
}

// read follows rank 0's frames until the link closes.
func (l *link) read() {
	for {
		t, arg, err := readFrame(l.nc)
		l.mu.Lock()
		switch {
		case err != nil:
			l.err = fmt.Errorf("link to rank 0: %w", err)
		case t == frameGo:
			l.passed = max(l.passed, int(arg))
		case t == frameDone:
			l.done, l.kept = true, arg == 1
		default:
			l.err = fmt.Errorf("link to rank 0: unknown frame type %d", t)
		}
		bad := l.err != nil
		close(l.changed)
		l.changed = make(chan struct{})
		l.mu.Unlock()
		if bad {
			return
		}
	}
}

// state is the link's view: a barrier passed, rank 0 done, or broken.
func (l *link) state() (passed int, done bool, err error, ch chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.passed, l.done, l.err, l.changed
}

// barrier enters the barrier before round and waits, up to timeout, for
// rank 0 to let it through.
func (l *link) barrier(ctx context.Context, round int, timeout time.Duration) error {
	if err := writeFrame(l.nc, &l.wmu, frameBarrier, uint32(round), nil, time.Time{}); err != nil {
		return fmt.Errorf("link to rank 0: %w", err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		passed, done, err, ch := l.state()
		switch {
		case passed >= round:
			return nil
		case err != nil:
			return err
		case done:
			return errLinkDone
		}
		select {
		case <-ch:
		case <-t.C:
			return fmt.Errorf("rank 0 did not pass the barrier within %v", timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// deliver sends the report and waits (until ctx ends) for rank 0 to
// release the ranks.
func (l *link) deliver(ctx context.Context, r Report) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if len(body) > maxReport {
		return fmt.Errorf("report of %d bytes over the limit of %d", len(body), maxReport)
	}
	deadline, _ := ctx.Deadline()
	stop := context.AfterFunc(ctx, func() { l.nc.SetWriteDeadline(time.Unix(1, 0)) }) //nolint:errcheck
	err = writeFrame(l.nc, &l.wmu, frameReport, uint32(len(body)), body, deadline)
	stop()
	if err != nil {
		return err
	}
	for {
		_, done, err, ch := l.state()
		switch {
		case done:
			l.mu.Lock()
			kept := l.kept
			l.mu.Unlock()
			if !kept {
				return errors.New("rank 0 finished without this rank's report (it arrived too late)")
			}
			return nil
		case err != nil:
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("rank 0 did not confirm the report: %w", ctx.Err())
		}
	}
}

func (l *link) close() { l.nc.Close() }
