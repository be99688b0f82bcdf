package mesh

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
)

// After the bootstrap every rank but 0 holds one TCP connection to rank 0's
// coordinator, its link (link.go). Rank 0 sends a 32-byte nonce; the rank
// answers HMAC-SHA256(runKey, nonce ‖ rank) and its rank (4 bytes); rank 0
// reads nothing more from a peer that fails and answers 'A' to one that
// passes. Then frames of a type byte and a 4-byte big-endian argument:
//
//	rank → 0  'B' round    arrived at the barrier before round
//	0 → rank  'G' round    that barrier is passed
//	rank → 0  'R' length   then length bytes: the rank's JSON Report
//	0 → rank  'D' kept     rank 0 has every report (or gave up): stop serving;
//	                       kept is 1 when this rank's report is in the document
//
// The links carry the barriers between rounds (the launcher serves only the
// bootstrap): a rank that dies closes its link, so rank 0 knows at once and
// no barrier waits for it. Ranks keep their servers up until 'D', so no test
// loses its server because its owner finished early.

// Frame types of a link.
const (
	frameAccept  = 'A'
	frameBarrier = 'B'
	frameGo      = 'G'
	frameReport  = 'R'
	frameDone    = 'D'
)

// maxReport bounds a report, bytes (a rank of a 4096-rank pairs run with
// a few tests per pair stays far below).
const maxReport = 256 << 20

// linkWriteTimeout bounds one small frame's write: a peer that stops reading
// cannot stall rank 0.
const linkWriteTimeout = 5 * time.Second

// Report is what one rank measured: the pairs it ran as client.
type Report struct {
	Rank         int               `json:"rank"`
	Env          *result.Env       `json:"env,omitempty"`
	Pairs        []result.MeshPair `json:"pairs"`
	UnsyncedFrom int               `json:"unsynced_from_round"`
	Warnings     []string          `json:"warnings,omitempty"`
}

func mac(key, nonce []byte, rank int) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(nonce)
	binary.Write(h, binary.BigEndian, uint32(rank)) //nolint:errcheck // hash writes do not fail
	return h.Sum(nil)
}

// readFrame reads one frame header.
func readFrame(r io.Reader) (byte, uint32, error) {
	var b [5]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, 0, err
	}
	return b[0], binary.BigEndian.Uint32(b[1:]), nil
}

// writeFrame writes one frame header (and body) within linkWriteTimeout, or
// by deadline when that is set and later.
func writeFrame(nc net.Conn, mu *sync.Mutex, t byte, arg uint32, body []byte, deadline time.Time) error {
	mu.Lock()
	defer mu.Unlock()
	if d := time.Now().Add(linkWriteTimeout); deadline.Before(d) {
		deadline = d
	}
	nc.SetWriteDeadline(deadline) //nolint:errcheck
	msg := make([]byte, 5, 5+len(body))
	msg[0] = t
	binary.BigEndian.PutUint32(msg[1:], arg)
	_, err := nc.Write(append(msg, body...))
	return err
}

// peer is rank 0's end of one rank's link.
type peer struct {
	nc  net.Conn
	wmu sync.Mutex
}

// coordinator is rank 0's end of the links: it registers the ranks, runs
// the barriers and collects the reports.
type coordinator struct {
	ln       net.Listener
	key      []byte
	n        int
	mu       sync.Mutex
	changed  chan struct{} // closed (and replaced) on every change
	peers    map[int]*peer
	got      map[int]Report
	gone     map[int]string // rank → why it is lost (closed link, never connected)
	late     map[int]bool   // missed a barrier: answered at once from then on
	arrived  []int          // highest barrier round each rank reached (-1: none)
	released int            // highest barrier round passed (-1: none)
	warnings []string
	unsynced int // first round run without a full barrier (-1: none)
	closed   bool
}

func newCoordinator(ln net.Listener, key []byte, n int) *coordinator {
	c := &coordinator{ln: ln, key: key, n: n, changed: make(chan struct{}), peers: map[int]*peer{},
		got: map[int]Report{}, gone: map[int]string{}, late: map[int]bool{}, arrived: make([]int, n),
		released: -1, unsynced: -1}
	for i := range c.arrived {
		c.arrived[i] = -1
	}
	return c
}

// notify wakes every waiter; c.mu held.
func (c *coordinator) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// serve accepts links until the listener closes.
func (c *coordinator) serve() {
	for {
		nc, err := c.ln.Accept()
		if err != nil {
			return
		}
		go c.handle(nc)
	}
}

// auth runs the challenge and registers the rank; -1: not a rank of this run.
func (c *coordinator) auth(nc net.Conn) (int, *peer) {
	nc.SetDeadline(time.Now().Add(30 * time.Second)) //nolint:errcheck
	nonce := make([]byte, 32)
	rand.Read(nonce) //nolint:errcheck // crypto/rand does not fail on Linux
	if _, err := nc.Write(nonce); err != nil {
		return -1, nil
	}
	var hdr [36]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil {
		return -1, nil
	}
	rank := int(binary.BigEndian.Uint32(hdr[32:]))
	if !hmac.Equal(hdr[:32], mac(c.key, nonce, rank)) || rank < 1 || rank >= c.n {
		return -1, nil // not a rank of this run: nothing more is read
	}
	p := &peer{nc: nc}
	c.mu.Lock()
	_, dup := c.peers[rank]
	_, lost := c.gone[rank]
	if dup || lost || c.closed {
		c.mu.Unlock()
		return -1, nil
	}
	c.peers[rank] = p
	c.notify()
	c.mu.Unlock()
	nc.SetDeadline(time.Time{}) //nolint:errcheck // the link lives until the end
	if writeFrame(nc, &p.wmu, frameAccept, 0, nil, time.Time{}) != nil {
		c.leave(rank, "its link to rank 0 failed at the start")
		return -1, nil
	}
	return rank, p
}

func (c *coordinator) handle(nc net.Conn) {
	defer nc.Close()
	rank, p := c.auth(nc)
	if rank < 0 {
		return
	}
	for {
		t, arg, err := readFrame(nc)
		if err != nil {
			c.leave(rank, fmt.Sprintf("its link to rank 0 closed (%v): the rank died or was killed", err))
			return
		}
		switch t {
		case frameBarrier:
			c.arrive(rank, p, int(arg))
		case frameReport:
			if r, err := readReport(nc, rank, arg); err != nil || !c.add(r) {
				c.leave(rank, fmt.Sprintf("its report was not valid (%v)", err))
				return
			}
		default:
			c.leave(rank, fmt.Sprintf("it sent an unknown frame type %d", t))
			return
		}
	}
}

// readReport reads a report body of n bytes from rank's link.
func readReport(nc net.Conn, rank int, n uint32) (Report, error) {
	var r Report
	if n > maxReport {
		return r, fmt.Errorf("%d bytes, over the limit of %d", n, maxReport)
	}
	nc.SetReadDeadline(time.Now().Add(5 * time.Minute)) //nolint:errcheck // the body may be large
	defer nc.SetReadDeadline(time.Time{})               //nolint:errcheck
	// read as it comes: a length alone allocates nothing
	body, err := io.ReadAll(io.LimitReader(nc, int64(n)))
	if err != nil {
		return r, err
	}
	if len(body) != int(n) {
		return r, fmt.Errorf("%d of %d bytes: %w", len(body), n, io.ErrUnexpectedEOF)
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, err
	}
	if r.Rank != rank {
		return r, fmt.Errorf("a report of rank %d on rank %d's link", r.Rank, rank)
	}
	return r, nil
}

// add records a report (rank 0's own, or one received).
func (c *coordinator) add(r Report) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.got[r.Rank]; dup || c.closed || r.Rank < 0 || r.Rank >= c.n {
		return false
	}
	c.got[r.Rank] = r
	c.notify()
	return true
}

// leave marks rank lost (unless its report is in).
func (c *coordinator) leave(rank int, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.got[rank]; ok || c.gone[rank] != "" || c.closed {
		return
	}
	c.gone[rank] = why
	c.notify()
}

// arrive records rank at the barrier before round; a rank that is late, or
// a round already passed, is let through at once.
func (c *coordinator) arrive(rank int, p *peer, round int) {
	c.mu.Lock()
	c.arrived[rank] = max(c.arrived[rank], round)
	now := c.late[rank] || round <= c.released
	c.notify()
	c.mu.Unlock()
	if now {
		writeFrame(p.nc, &p.wmu, frameGo, uint32(round), nil, time.Time{}) //nolint:errcheck // a dead link is seen by its reader
	}
}

// expectAll marks the ranks that have no link yet as lost. Called after the
// bootstrap: a rank enters the last all-gather only once its link is
// accepted.
func (c *coordinator) expectAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for r := 1; r < c.n; r++ {
		if c.peers[r] == nil && c.gone[r] == "" {
			c.gone[r] = "it never connected to rank 0"
		}
	}
	c.notify()
}

// barrier is rank 0's barrier before round: it waits (up to timeout) for
// every rank that is neither lost nor late, then lets them through. Ranks
// still missing at the timeout are late from then on: they run their
// remaining rounds unsynchronised. An error: ctx ended.
func (c *coordinator) barrier(ctx context.Context, round int, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	expired := false
	for {
		c.mu.Lock()
		var missing []int
		for r := 1; r < c.n; r++ {
			if c.gone[r] == "" && !c.late[r] && c.arrived[r] < round {
				missing = append(missing, r)
			}
		}
		ch := c.changed
		if len(missing) == 0 || expired {
			through := c.release(round, missing, timeout)
			c.mu.Unlock()
			for _, p := range through {
				writeFrame(p.nc, &p.wmu, frameGo, uint32(round), nil, time.Time{}) //nolint:errcheck // a dead link is seen by its reader
			}
			return nil
		}
		c.mu.Unlock()
		select {
		case <-ch:
		case <-t.C:
			expired = true
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release passes the barrier before round: the missing ranks are late from
// now on; it returns the links to let through. c.mu held.
func (c *coordinator) release(round int, missing []int, timeout time.Duration) []*peer {
	for _, r := range missing {
		c.late[r] = true
		c.warnings = append(c.warnings, fmt.Sprintf("rank %d did not reach the barrier before round %d within %v: "+
			"it runs its remaining rounds unsynchronised", r, round, timeout))
		if c.unsynced < 0 {
			c.unsynced = round
		}
	}
	c.released = round
	var through []*peer
	for r, p := range c.peers {
		if c.gone[r] == "" && c.arrived[r] >= round {
			through = append(through, p)
		}
	}
	return through
}

// wait returns the reports and the lost ranks (with why) once every rank
// has reported or is lost, or ctx ends; then it releases every rank ('D')
// and closes the links.
func (c *coordinator) wait(ctx context.Context) (map[int]Report, map[int]string) {
	for {
		c.mu.Lock()
		done := len(c.got)+len(c.gone) >= c.n
		ch := c.changed
		c.mu.Unlock()
		if done {
			break
		}
		select {
		case <-ch:
			continue
		case <-ctx.Done():
		}
		break
	}
	c.close()
	c.mu.Lock()
	defer c.mu.Unlock()
	got := make(map[int]Report, len(c.got))
	for k, v := range c.got {
		got[k] = v
	}
	gone := map[int]string{}
	for r := range c.n {
		if _, ok := got[r]; !ok {
			gone[r] = c.gone[r]
			if gone[r] == "" {
				gone[r] = "its report did not reach rank 0 in time (the rank hung or was too slow)"
			}
		}
	}
	return got, gone
}

// close releases every rank and closes the listener and the links (once).
func (c *coordinator) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	kept := map[*peer]uint32{}
	for r, p := range c.peers {
		if _, ok := c.got[r]; ok {
			kept[p] = 1
		} else {
			kept[p] = 0
		}
	}
	c.mu.Unlock()
	c.ln.Close()
	var wg sync.WaitGroup
	for p, k := range kept {
		wg.Add(1)
		go func() { // in parallel: a rank that stopped reading costs linkWriteTimeout once
			defer wg.Done()
			writeFrame(p.nc, &p.wmu, frameDone, k, nil, time.Time{}) //nolint:errcheck // a rank that left does not care
			p.nc.Close()
		}()
	}
	wg.Wait()
}

// syncState is what the barriers left for the document: warnings and the
// first round run without a full barrier.
func (c *coordinator) syncState() ([]string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.warnings...), c.unsynced
}
