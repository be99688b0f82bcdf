package mesh

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
)

// A rank's report reaches rank 0 over TCP, after a challenge: rank 0 sends
// a 32-byte nonce, the rank answers HMAC-SHA256(runKey, nonce ‖ rank) and its
// rank (4 bytes), and only then the length (4 bytes) and the JSON report.
// Rank 0 reads nothing more from a peer that fails the challenge. It keeps
// every connection open until it has all reports (or gives up), then sends
// one byte: the ranks keep their servers up until then, so no test loses
// its server early.

// maxReport bounds a report, bytes (a rank of a 4096-rank pairs run with
// a few tests per pair stays far below).
const maxReport = 256 << 20

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

// collector is rank 0's end.
type collector struct {
	ln   net.Listener
	key  []byte
	n    int
	mu   sync.Mutex
	got  map[int]Report
	held []net.Conn
	all  chan struct{}
}

func newCollector(ln net.Listener, key []byte, n int) *collector {
	return &collector{ln: ln, key: key, n: n, got: map[int]Report{}, all: make(chan struct{})}
}

// add records a report (rank 0's own, or one received).
func (c *collector) add(r Report) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.got[r.Rank]; dup || r.Rank < 0 || r.Rank >= c.n {
		return false
	}
	c.got[r.Rank] = r
	if len(c.got) == c.n {
		close(c.all)
	}
	return true
}

// serve accepts reports until the listener closes.
func (c *collector) serve() {
	for {
		nc, err := c.ln.Accept()
		if err != nil {
			return
		}
		go c.handle(nc)
	}
}

func (c *collector) handle(nc net.Conn) {
	nc.SetDeadline(time.Now().Add(30 * time.Second)) //nolint:errcheck
	nonce := make([]byte, 32)
	rand.Read(nonce) //nolint:errcheck // crypto/rand does not fail on Linux
	if _, err := nc.Write(nonce); err != nil {
		nc.Close()
		return
	}
	var hdr [36]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil {
		nc.Close()
		return
	}
	rank := int(binary.BigEndian.Uint32(hdr[32:]))
	if !hmac.Equal(hdr[:32], mac(c.key, nonce, rank)) {
		nc.Close() // not a rank of this run: nothing more is read
		return
	}
	var l [4]byte
	if _, err := io.ReadFull(nc, l[:]); err != nil {
		nc.Close()
		return
	}
	n := binary.BigEndian.Uint32(l[:])
	if n > maxReport {
		nc.Close()
		return
	}
	nc.SetDeadline(time.Now().Add(5 * time.Minute)) //nolint:errcheck // the body may be large
	body := make([]byte, n)
	if _, err := io.ReadFull(nc, body); err != nil {
		nc.Close()
		return
	}
	var r Report
	if json.Unmarshal(body, &r) != nil || r.Rank != rank || !c.add(r) {
		nc.Close()
		return
	}
	nc.SetDeadline(time.Time{}) //nolint:errcheck // held until done
	c.mu.Lock()
	c.held = append(c.held, nc)
	c.mu.Unlock()
}

// wait returns the reports once all ranks reported or ctx ends, then
// releases every held rank.
func (c *collector) wait(ctx context.Context) map[int]Report {
	select {
	case <-c.all:
	case <-ctx.Done():
	}
	c.ln.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, nc := range c.held {
		nc.SetWriteDeadline(time.Now().Add(2 * time.Second)) //nolint:errcheck
		nc.Write([]byte{1})                                  //nolint:errcheck // a rank that left early does not care
		nc.Close()
	}
	c.held = nil
	out := make(map[int]Report, len(c.got))
	for k, v := range c.got {
		out[k] = v
	}
	return out
}

// deliver sends r to rank 0's collector at addr and waits (until ctx ends)
// for its release byte.
func deliver(ctx context.Context, addr string, key []byte, r Report) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if len(body) > maxReport {
		return fmt.Errorf("report of %d bytes over the limit of %d", len(body), maxReport)
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) }) //nolint:errcheck
	defer stop()
	nonce := make([]byte, 32)
	if _, err := io.ReadFull(nc, nonce); err != nil {
		return fmt.Errorf("challenge: %w", err)
	}
	msg := append(mac(key, nonce, r.Rank), 0, 0, 0, 0, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(msg[32:], uint32(r.Rank))
	binary.BigEndian.PutUint32(msg[36:], uint32(len(body)))
	if _, err := nc.Write(append(msg, body...)); err != nil {
		return err
	}
	var b [1]byte
	if _, err := io.ReadFull(nc, b[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("rank 0 closed without accepting the report")
		}
		return err
	}
	return nil
}
