package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
)

// The server's accept loop: who gets in, how many at once, and how it ends.
//
// Each accepted connection first enters the startup table (startups.go:
// refused with a reason past the per-source cap; the oldest dropped when
// the table is full), then passes --allow and protected mode (before
// anything is read), then has handshakeTimeout to authenticate; it leaves
// the table once it has. Accept errors from file-descriptor exhaustion
// back off and retry. When Serve's context ends, every open session is
// closed, which aborts its test, and Serve returns within shutdownGrace.

// Limits of the accept loop.
var (
	handshakeTimeout = 5 * time.Second // accept to authenticated hello: a slow or silent peer is closed
	shutdownGrace    = 1500 * time.Millisecond
	acceptBackoffMax = time.Second
)

// HeartbeatTimeout is how long the server waits for a heartbeat of a
// client in a test before it drops it.
func HeartbeatTimeout() time.Duration { return heartbeatTimeout }

// HandshakeTimeout is how long a connection has to authenticate.
func HandshakeTimeout() time.Duration { return handshakeTimeout }

// listenState is the accept loop's part of a Server.
type listenState struct {
	starts *startups // connections between accept and authentication
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[*proto.Conn]string // open sessions and their peers
	// abandoned: Serve returned with sessions still running (see Close).
	abandoned atomic.Bool
	limit     logLimiter
}

// Serve accepts control connections until ctx ends or the listener fails.
// When ctx ends it closes every session (aborting a running test) and
// returns within shutdownGrace.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.lis.mu.Lock()
	if s.lis.starts == nil {
		s.lis.starts = newStartups(s.maxStartups())
	}
	s.lis.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		ln.Close()
		s.closeSessions()
	})
	defer stop()
	if s.cfg.Once {
		quit := make(chan struct{})
		defer close(quit)
		go func() {
			select {
			case <-s.once.ch():
				ln.Close()
			case <-quit:
			}
		}()
	}
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return s.drain()
			}
			if ended, onceErr := s.once.result(); ended {
				s.log.Printf("served one session (--once): stopping")
				s.drain()
				return onceErr
			}
			if !retryAccept(err) {
				s.drain()
				return err
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), acceptBackoffMax)
			s.lis.limit.printf(s.log, "accept", "accept: %v; backing off %v", err, backoff)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
			}
			continue
		}
		backoff = 0
		st, oldest, re := s.lis.starts.admit(nc)
		if re != nil {
			s.lis.limit.printf(s.log, "refused "+re.Code, "client %s: refused (%s): %d connections from it already in the handshake (--max-startups-per-addr)",
				nc.RemoteAddr(), re.Code, s.lis.starts.perAddr)
			s.refuseStartup(nc, re)
			continue
		}
		if oldest != nil {
			s.dropStartup(oldest, nc.RemoteAddr())
		}
		s.lis.wg.Add(1)
		go func() {
			defer s.lis.wg.Done()
			s.session(ctx, nc, st)
		}()
	}
}

// retryAccept reports whether an accept error is worth retrying after a
// pause: out of file descriptors or memory, or a connection aborted
// before it was accepted.
func retryAccept(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// inHandshake is the number of connections between accept and
// authentication (0 before Serve).
func (s *Server) inHandshake() int {
	s.lis.mu.Lock()
	t := s.lis.starts
	s.lis.mu.Unlock()
	if t == nil {
		return 0
	}
	return t.len()
}

// maxStartups is the global and per-source caps of the startup table:
// ServerConfig's, or the defaults.
func (s *Server) maxStartups() (all, perAddr int) {
	all, perAddr = s.cfg.MaxStartups, s.cfg.MaxStartupsPerAddr
	if all <= 0 {
		all = DefaultMaxStartups()
	}
	if perAddr <= 0 {
		perAddr = DefaultMaxStartupsPerAddr
	}
	return all, min(perAddr, all)
}

// track registers an open session so that a shutdown can close it; the
// returned func unregisters it.
func (s *Server) track(c *proto.Conn, peer string) func() {
	s.lis.mu.Lock()
	defer s.lis.mu.Unlock()
	if s.lis.conns == nil {
		s.lis.conns = map[*proto.Conn]string{}
	}
	s.lis.conns[c] = peer
	return func() {
		s.lis.mu.Lock()
		delete(s.lis.conns, c)
		s.lis.mu.Unlock()
	}
}

// closeSessions closes every open session's connection: its receives fail,
// which aborts its test's engines.
func (s *Server) closeSessions() {
	s.lis.mu.Lock()
	defer s.lis.mu.Unlock()
	for c, peer := range s.lis.conns {
		if s.busy.Load() {
			s.log.Printf("shutting down: closing the session of client %s", peer)
		}
		c.Close()
	}
}

// drain waits up to shutdownGrace for the sessions to end.
func (s *Server) drain() error {
	done := make(chan struct{})
	go func() {
		s.lis.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(shutdownGrace):
		s.lis.abandoned.Store(true)
		s.lis.mu.Lock()
		n := len(s.lis.conns)
		s.lis.mu.Unlock()
		s.log.Printf("shutting down: %d session(s) still ending after %v; leaving them", n, shutdownGrace)
		return nil
	}
}

// refusal says why a peer may not even start a handshake: outside --allow,
// or not on loopback in protected mode. nil: admitted.
func (s *Server) refusal(peer netip.Addr) *proto.RemoteError {
	if len(s.cfg.Allow) > 0 && !allowed(s.cfg.Allow, peer) {
		return &proto.RemoteError{Code: codeNotAllowed, Msg: fmt.Sprintf("client %s is not in the server's --allow list", peer)}
	}
	if len(s.cfg.AuthKey) == 0 && !s.cfg.Exposed && !peer.IsLoopback() {
		return &proto.RemoteError{Code: codeProtected, Msg: fmt.Sprintf("the server is in protected mode: without a key and without --bind "+
			"it serves loopback clients only (this client is %s). To open it, start it with --auth-key-file FILE "+
			"(and give clients the same key), or with --bind ADDR to serve any client that reaches ADDR", peer)}
	}
	return nil
}

func allowed(nets []netip.Prefix, a netip.Addr) bool {
	for _, p := range nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParseAllow parses --allow: a comma-separated list of CIDR prefixes
// (10.0.0.0/8, fd00::/8) or single addresses.
func ParseAllow(v string) ([]netip.Prefix, error) {
	var nets []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("%q is neither a CIDR prefix (10.0.0.0/8) nor an address", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		nets = append(nets, p.Masked())
	}
	if len(nets) == 0 {
		return nil, errors.New("empty list")
	}
	return nets, nil
}

// refuse sends a refusal to a peer whose hello it has not read, then
// closes the connection after the peer has read it (or within a second):
// closing with the hello unread would reset the connection and lose the
// message.
func refuse(nc net.Conn, re *proto.RemoteError) {
	defer nc.Close()
	c := proto.NewConn(nc, time.Second)
	if c.SendError(re) != nil {
		return
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	nc.SetReadDeadline(time.Now().Add(time.Second))
	var buf [4096]byte
	for n := 0; n < 64<<10; {
		m, err := nc.Read(buf[:])
		if err != nil {
			return
		}
		n += m
	}
}

// logLimiter prints at most one line per second per key, and counts the
// lines it held back: a flood cannot flood the log.
type logLimiter struct {
	mu   sync.Mutex
	last map[string]time.Time
	held map[string]int
}

type printfer interface{ Printf(string, ...any) }

func (l *logLimiter) printf(lg printfer, key, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last, l.held = map[string]time.Time{}, map[string]int{}
	}
	if time.Since(l.last[key]) < time.Second {
		l.held[key]++
		return
	}
	if n := l.held[key]; n > 0 {
		format += fmt.Sprintf(" (and %d more like it)", n)
	}
	l.last[key], l.held[key] = time.Now(), 0
	lg.Printf(format, args...)
}

// RemoteError codes of connections refused before their handshake.
const (
	codeProtected  = "protected"   // protected mode: a non-loopback client and no key, no --bind
	codeNotAllowed = "not-allowed" // the client's address is outside --allow
)
