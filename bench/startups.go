package bench

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
//     MaxStartupsPerAddr from one source is refused at accept, with an error
//     frame naming the limit (code "too-many");
//   - in all: when MaxStartups connections are in the table, the oldest one
//     is dropped (told so in an error frame, code "dropped") to make room
//     for the new one, so a flood from many sources delays a real client by
//     one handshake at most, instead of shutting it out.
//
// The default of MaxStartups comes from the fd budget (startupsForFDs): a
// table full of connections leaves file descriptors for the sessions and
// their tests.

// Defaults and bounds of the startup caps.
const (
	DefaultMaxStartupsPerAddr = 8    // unauthenticated connections from one source
	maxStartupsCeiling        = 1024 // the automatic global cap never exceeds this
	minStartups               = 4    // nor falls below this
	// startupReserveFDs are the file descriptors kept out of the startup
	// budget: the listener, the devices' and the runtime's own, a test's.
	startupReserveFDs = 32
)

// RemoteError codes of the startup caps.
const (
	codeTooMany = "too-many" // the client's source has MaxStartupsPerAddr connections in the handshake
	codeDropped = "dropped"  // the oldest unauthenticated connection, dropped for a newer one
)

// startupsForFDs is the global cap for a file-descriptor limit of nofile:
// half of what is left after the reserve, within [minStartups,
// maxStartupsCeiling].
func startupsForFDs(nofile uint64) int {
	n := 0
	if nofile > startupReserveFDs {
		n = int(min((nofile-startupReserveFDs)/2, maxStartupsCeiling))
	}
	return max(n, minStartups)
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
func DefaultMaxStartups() int { return startupsForFDs(FDLimit()) }

// MaxStartupsLimit is the largest --max-startups this process's
// file-descriptor limit allows: every startup one descriptor, with the
// reserve and as many again for sessions and refusals.
func MaxStartupsLimit() int {
	n := FDLimit()
	if n == 0 { // unknown: do not refuse on a guess
		return maxStartupsCeiling * 64
	}
	return max(startupsForFDs(n), int(min(n, 1<<30)/2))
}

// startup is one connection in the table.
type startup struct {
	nc      net.Conn
	src     netip.Prefix
	at      time.Time
	dropped atomic.Bool // dropped for a newer connection (the session logs nothing more)
	done    bool        // out of the table (under startups.mu)
}

// startups is the table; the zero value is not usable (newStartups).
type startups struct {
	mu      sync.Mutex
	perAddr int
	max     int
	order   []*startup // oldest first
	count   map[netip.Prefix]int
	// lingering bounds the refusals that wait for their peer to read the
	// error (refuse); past it a refusal closes at once.
	lingering chan struct{}
}

func newStartups(maxAll, perAddr int) *startups {
	return &startups{perAddr: perAddr, max: maxAll, count: map[netip.Prefix]int{}, lingering: make(chan struct{}, max(2, maxAll/4))}
}

// sourceOf is the source a connection counts against: its address, or for
// IPv6 its /64 (one host often holds a whole /64).
func sourceOf(a netip.Addr) netip.Prefix {
	bits := a.BitLen()
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

// admit enters nc into the table. It returns the refusal to send when nc's
// source is at its cap, and otherwise the entry and, when the table was
// full, the oldest entry, which admit has taken out and the caller must drop
// (dropStartup).
func (t *startups) admit(nc net.Conn) (st, oldest *startup, re *proto.RemoteError) {
	src := sourceOf(addrOf(nc.RemoteAddr()))
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.count[src] >= t.perAddr {
		return nil, nil, &proto.RemoteError{Code: codeTooMany, Msg: fmt.Sprintf(
			"refused: %d connections from %s are already in the handshake, the server's limit per address (server --max-startups-per-addr %d)",
			t.count[src], src.Addr(), t.perAddr)}
	}
	if len(t.order) >= t.max {
		oldest = t.order[0]
		t.removeLocked(oldest)
	}
	st = &startup{nc: nc, src: src, at: time.Now()}
	t.order = append(t.order, st)
	t.count[src]++
	return st, oldest, nil
}

// done takes st out of the table (its handshake is over); idempotent.
func (t *startups) done(st *startup) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.removeLocked(st)
}

func (t *startups) removeLocked(st *startup) {
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
	if t.count[st.src]--; t.count[st.src] <= 0 {
		delete(t.count, st.src)
	}
}

// len is the number of connections in the table.
func (t *startups) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.order)
}

// dropStartup tells the oldest connection why it goes and closes it, which
// ends its session's handshake. The write may race the session's own reply
// frame; it has a short deadline, and the close follows either way.
func (s *Server) dropStartup(st *startup, newer net.Addr) {
	st.dropped.Store(true)
	s.lis.limit.printf(s.log, "dropped", "client %s: dropped after %v unauthenticated: %d connections in the handshake, the server's limit (--max-startups); making room for %s",
		st.nc.RemoteAddr(), time.Since(st.at).Round(time.Millisecond), s.lis.starts.max, newer)
	go func() {
		c := proto.NewConn(st.nc, 200*time.Millisecond)
		c.SendError(&proto.RemoteError{Code: codeDropped, Msg: fmt.Sprintf(
			"dropped: the server had %d connections in the handshake (server --max-startups %d), and this was the oldest", s.lis.starts.max, s.lis.starts.max)})
		st.nc.Close()
	}()
}

// refuseStartup sends a refusal without reading anything, lingering for
// the peer to read it (refuse) while fewer than a quarter of the global cap
// (at least 2) linger, and closing at once after the write otherwise: a
// flood of refusals cannot hold the server's file descriptors.
func (s *Server) refuseStartup(nc net.Conn, re *proto.RemoteError) {
	select {
	case s.lis.starts.lingering <- struct{}{}:
		go func() {
			defer func() { <-s.lis.starts.lingering }()
			refuse(nc, re)
		}()
	default:
		c := proto.NewConn(nc, 100*time.Millisecond)
		c.SendError(re)
		nc.Close()
	}
}
