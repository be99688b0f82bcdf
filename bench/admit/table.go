package admit

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
)

// The server's table of unauthenticated connections ("startups", as in
// sshd's MaxStartups): every accepted connection is in it from accept until
// its handshake ends. Two caps keep one host from locking others out:
//
//   - per source (an IPv4 address, or an IPv6 /64): a connection past
//     the per-address cap from one source is refused at accept, with an
//     error frame naming the limit (code CodeTooMany);
//   - in all: when the table is full, the oldest connection is dropped
//     (told so in an error frame, code CodeDropped) to make room for the
//     new one, so a flood from many sources delays a real client by one
//     handshake at most, instead of shutting it out.
//
// The default global cap comes from the fd budget (ForFDs): a table full
// of connections leaves file descriptors for the sessions and their tests.

// Defaults and bounds of the startup caps.
const (
	DefaultMaxStartupsPerAddr = 8    // unauthenticated connections from one source
	MaxStartupsCeiling        = 1024 // the automatic global cap never exceeds this
	MinStartups               = 4    // nor falls below this
	// startupReserveFDs are the file descriptors kept out of the startup
	// budget: the listener, the devices' and the runtime's own, a test's.
	startupReserveFDs = 32
)

// RemoteError codes of the startup caps.
const (
	CodeTooMany = "too-many" // the client's source has the per-address cap of connections in the handshake
	CodeDropped = "dropped"  // the oldest unauthenticated connection, dropped for a newer one
)

// CodeBusy is the RemoteError code of a server serving another client.
const CodeBusy = "busy"

// ForFDs is the global cap for a file-descriptor limit of nofile: half of
// what is left after the reserve, within [MinStartups, MaxStartupsCeiling].
func ForFDs(nofile uint64) int {
	n := 0
	if nofile > startupReserveFDs {
		n = int(min((nofile-startupReserveFDs)/2, MaxStartupsCeiling))
	}
	return max(n, MinStartups)
}

// FDLimit is this process's soft RLIMIT_NOFILE (Go raises it to the hard
// limit at start); 0 when it cannot be read.
func FDLimit() uint64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	return rl.Cur
}

// DefaultMaxStartups is the global cap on unauthenticated connections for
// this process's file-descriptor limit.
func DefaultMaxStartups() int { return ForFDs(FDLimit()) }

// MaxStartupsLimit is the largest --max-startups this process's
// file-descriptor limit allows: every startup one descriptor, with the
// reserve and as many again for sessions and refusals.
func MaxStartupsLimit() int {
	n := FDLimit()
	if n == 0 { // unknown: do not refuse on a guess
		return MaxStartupsCeiling * 64
	}
	return max(ForFDs(n), int(min(n, 1<<30)/2))
}

// Entry is one connection in the table.
type Entry struct {
	NC      net.Conn
	Src     netip.Prefix
	At      time.Time   // when it was admitted
	Dropped atomic.Bool // dropped for a newer connection (the session logs nothing more)
	done    bool        // out of the table (under Table.mu)
}

// Table is the table; the zero value is not usable (New).
type Table struct {
	mu      sync.Mutex
	perAddr int
	max     int
	order   []*Entry // oldest first
	count   map[netip.Prefix]int
	// lingering bounds the refusals that wait for their peer to read the
	// error (Refuse); past it a refusal closes at once.
	lingering chan struct{}
}

// New is a table of at most maxAll connections, perAddr from one source.
func New(maxAll, perAddr int) *Table {
	return &Table{perAddr: perAddr, max: maxAll, count: map[netip.Prefix]int{}, lingering: make(chan struct{}, max(2, maxAll/4))}
}

// Max is the global cap; PerAddr the per-source one.
func (t *Table) Max() int     { return t.max }
func (t *Table) PerAddr() int { return t.perAddr }

// SourceOf is the source a connection counts against: its address, or for
// IPv6 its /64 (one host often holds a whole /64).
func SourceOf(a netip.Addr) netip.Prefix {
	bits := a.BitLen()
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

// AddrOf is a TCP address's IP (unmapped), or the zero Addr.
func AddrOf(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(ta.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}

// Admit enters nc into the table. It returns the refusal to send when nc's
// source is at its cap, and otherwise the entry and, when the table was
// full, the oldest entry, which Admit has taken out and the caller must drop.
func (t *Table) Admit(nc net.Conn) (st, oldest *Entry, re *proto.RemoteError) {
	src := SourceOf(AddrOf(nc.RemoteAddr()))
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.count[src] >= t.perAddr {
		return nil, nil, &proto.RemoteError{Code: CodeTooMany, Msg: fmt.Sprintf(
			"refused: %d connections from %s are already in the handshake, the server's limit per address (server --max-startups-per-addr %d)",
			t.count[src], src.Addr(), t.perAddr)}
	}
	if len(t.order) >= t.max {
		oldest = t.order[0]
		t.removeLocked(oldest)
	}
	st = &Entry{NC: nc, Src: src, At: time.Now()}
	t.order = append(t.order, st)
	t.count[src]++
	return st, oldest, nil
}

// Done takes st out of the table (its handshake is over); idempotent.
func (t *Table) Done(st *Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.removeLocked(st)
}

func (t *Table) removeLocked(st *Entry) {
	if st.done {
		return
	}
	st.done = true
	for i, o := range t.order {
		if o == st {
			t.order = append(t.order[:i], t.order[i+1:]...)
			break
		}
	}
	if t.count[st.Src]--; t.count[st.Src] <= 0 {
		delete(t.count, st.Src)
	}
}

// Len is the number of connections in the table.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.order)
}

// RefuseBounded sends re on nc without reading anything, lingering for the
// peer to read it (Refuse) while fewer than a quarter of the global cap (at
// least 2) linger, and closing at once after the write otherwise: a flood
// of refusals cannot hold the server's file descriptors.
func (t *Table) RefuseBounded(nc net.Conn, re *proto.RemoteError) {
	select {
	case t.lingering <- struct{}{}:
		go func() {
			defer func() { <-t.lingering }()
			Refuse(nc, re)
		}()
	default:
		c := proto.NewConn(nc, 100*time.Millisecond)
		c.SendError(re)
		nc.Close()
	}
}

// Lingering is the number of refusals waiting for their peer now.
func (t *Table) Lingering() int { return len(t.lingering) }
