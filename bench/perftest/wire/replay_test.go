package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The replay tests feed exchanges recorded against real perftest 6.06,
// 6.28 and 6.29 in the test guest (testdata/exchanges, written by the
// drop-in with RDMABENCH_DROPIN_RECORD) back to this package: every byte
// perftest sent must parse, in the steps and sizes the drop-in reads, what
// this package sends must be the bytes perftest accepted then, and the
// negotiated parameters (Test.Params) must equal perftest's.

// replayConn is a net.Conn whose reads return what perftest sent, swap by
// swap (a Read returns what is left of one swap's bytes: -R's rdma_cm
// channel reads a message so, and io.ReadFull over a TCP stream gets the
// same bytes). As perftest did, it sends a swap's bytes only once the
// drop-in has written what perftest read before them (gate: the bytes
// the drop-in must have written; a Read before that times out, as one of
// a real connection would). Writes are kept.
type replayConn struct {
	net.Conn
	msgs   [][]byte
	gate   []int
	cur    []byte
	wrote  [][]byte
	nwrote int
}

func (c *replayConn) Read(b []byte) (int, error) {
	if len(c.cur) == 0 {
		if len(c.msgs) == 0 {
			return 0, io.EOF
		}
		if len(c.gate) > 0 && c.nwrote < c.gate[0] {
			return 0, os.ErrDeadlineExceeded
		}
		c.cur, c.msgs = c.msgs[0], c.msgs[1:]
		if len(c.gate) > 0 {
			c.gate = c.gate[1:]
		}
	}
	n := copy(b, c.cur)
	c.cur = c.cur[n:]
	return n, nil
}

func (c *replayConn) Write(b []byte) (int, error) {
	c.wrote = append(c.wrote, bytes.Clone(b))
	c.nwrote += len(b)
	return len(b), nil
}
func (c *replayConn) SetReadDeadline(time.Time) error  { return nil }
func (c *replayConn) SetWriteDeadline(time.Time) error { return nil }
func (c *replayConn) left() int {
	n := len(c.cur)
	for _, m := range c.msgs {
		n += len(m)
	}
	return n
}

func unhex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordings reads testdata/exchanges/*.json.
func recordings(t testing.TB) map[string]*Recording {
	files, err := filepath.Glob("testdata/exchanges/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in testdata/exchanges: %v", err)
	}
	out := map[string]*Recording{}
	for _, f := range files {
		r, err := ReadRecording(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = r
	}
	return out
}

// peerBytes is what perftest sent, one message per swap.
func peerBytes(t testing.TB, r *Recording) [][]byte {
	msgs, _ := peerSwaps(t, r)
	return msgs
}

// peerSwaps is what perftest sent, one message per swap, and before each
// the bytes the drop-in had written (replayConn.gate): all of the swap's
// own where the drop-in writes first (the client; the server in the
// closing "done", where the roles turn), else those of the swaps before.
func peerSwaps(t testing.TB, r *Recording) (msgs [][]byte, gate []int) {
	sent := 0
	for _, s := range r.Swaps {
		mine := len(unhex(t, s.Sent))
		first := r.Client != (s.Field == "done")
		if g := unhex(t, s.Got); len(g) > 0 {
			msgs = append(msgs, g)
			if first {
				gate = append(gate, sent+mine)
			} else {
				gate = append(gate, sent)
			}
		}
		sent += mine
	}
	return msgs, gate
}

// recordingSeeds are the recordings as FuzzExchange seeds: perftest's bytes
// in one stream.
func recordingSeeds(f *testing.F) []struct {
	peer   []byte
	binary bool
} {
	var out []struct {
		peer   []byte
		binary bool
	}
	rs := recordings(f)
	names := make([]string, 0, len(rs))
	for n := range rs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := rs[n]
		out = append(out, struct {
			peer   []byte
			binary bool
		}{bytes.Join(peerBytes(f, r), nil), r.Binary})
	}
	return out
}

// replay plays the drop-in's side of r against perftest's recorded bytes.
// It returns the first error, naming the swap.
func replay(t *testing.T, r *Recording) error {
	rc := &replayConn{}
	rc.msgs, rc.gate = peerSwaps(t, r)
	c := &Conn{C: rc, Client: r.Client, Binary: r.Binary}
	sw := r.Swaps
	u64 := func(i int) uint64 { return binary.BigEndian.Uint64(unhex(t, sw[i].Sent)) }
	f64 := func(i int) float64 { return math.Float64frombits(u64(i)) }
	for i := 0; i < len(sw); i++ {
		s := sw[i]
		sent := unhex(t, s.Sent)
		var err error
		step := 1
		switch f := s.Field; {
		case f == "version":
			_, err = c.Versions(OurVersion)
		case f == "sys data: cycle buffer":
			step = 2
			_, err = c.SysData(SysData{CycleBuffer: int32(binary.BigEndian.Uint32(sent)), CacheLineSize: int32(binary.BigEndian.Uint32(unhex(t, sw[i+1].Sent)))})
		case f == "mtu":
			var m int
			if m, err = ParseMTU(sent); err == nil {
				_, err = c.MTU(m)
			}
		case f == "negotiation":
			var ok bool
			if _, ok, err = c.Negotiate(r.Test.Params()); err == nil && !ok {
				err = errors.New("no negotiation with a peer that negotiated")
			}
		case f == "bw report: size":
			step = 5
			ours := BWReport{Size: u64(i), BWPeak: f64(i + 2), BWAvg: f64(i + 3), MsgRateAvg: f64(i + 4)}
			if len(unhex(t, sw[i+1].Sent)) == 8 {
				ours.Iters = u64(i + 1)
			}
			_, err = c.SwapBWReport(ours)
		case f == "done":
			c.Client = !c.Client
			_, err = c.Swap(f, sent, len(unhex(t, s.Got)))
		default: // a per-QP record
			var d Dest
			if r.Binary {
				d, err = ParseBinary(sent, f)
			} else {
				d, err = ParseDest(sent, r.WithGID, f)
			}
			if err == nil {
				_, err = c.Dest(d, r.WithGID, f)
			}
		}
		if s.Err != "" { // the recorded exchange ended here (the peer closed, as it may at the end)
			return nil
		}
		if err != nil {
			return err
		}
		i += step - 1
	}
	if n := rc.left(); n != 0 {
		return errors.New("perftest's bytes are not all read: " + hex.EncodeToString(rc.cur))
	}
	if len(rc.wrote) != len(sw) {
		return errors.New("wrote a different number of swaps than the drop-in did against perftest")
	}
	for i, w := range rc.wrote {
		if sw[i].Field == "version" {
			continue
		}
		if !bytes.Equal(w, unhex(t, sw[i].Sent)) {
			return errors.New(sw[i].Field + ": sends " + hex.EncodeToString(w) + ", not what perftest accepted: " + sw[i].Sent)
		}
	}
	return nil
}

// TestReplay replays every recording (testdata/exchanges).
func TestReplay(t *testing.T) {
	rs := recordings(t)
	seen := map[string]bool{}
	for name, r := range rs {
		seen[r.Peer] = true
		t.Run(name, func(t *testing.T) {
			if err := replay(t, r); err != nil {
				t.Fatalf("%s %s against perftest %s: %v", r.Tool, strings.Join(r.Args, " "), r.Peer, err)
			}
		})
	}
	for _, v := range []string{"6.06", "6.28", "6.29"} {
		if !seen[v] {
			t.Errorf("no recording against perftest %s", v)
		}
	}
}
