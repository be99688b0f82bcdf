package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/bench/admit"
	"github.com/rdmabench/rdmabench/bench/ctrl"
	"github.com/rdmabench/rdmabench/bench/proto"
)

// The server's accept loop: who gets in, how many at once, and how it ends.
//
// Each accepted connection first enters the startup table (bench/admit:
// refused with a reason past the per-source cap; the oldest dropped when
// the table is full, dropStartup), then passes --allow and protected mode (before
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
func HeartbeatTimeout() time.Duration { return ctrl.HeartbeatTimeout }

// HandshakeTimeout is how long a connection has to authenticate.
func HandshakeTimeout() time.Duration { return handshakeTimeout }

// listenState is the accept loop's part of a Server.
type listenState struct {
	starts *admit.Table // connections between accept and authentication
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[*proto.Conn]string // open sessions and their peers
	// abandoned: Serve returned with sessions still running (see Close).
	abandoned atomic.Bool
	limit     admit.LogLimiter
}

// Serve accepts control connections until ctx ends or the listener fails.
// When ctx ends it closes every session (aborting a running test) and
// returns within shutdownGrace.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.lis.mu.Lock()
	if s.lis.starts == nil {
		s.lis.starts = admit.New(s.maxStartups())
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
			s.lis.limit.Printf(s.log, "accept", "accept: %v; backing off %v", err, backoff)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
			}
			continue
		}
		backoff = 0
		st, oldest, re := s.lis.starts.Admit(nc)
		if re != nil {
			s.lis.limit.Printf(s.log, "refused "+re.Code, "client %s: refused (%s): %d connections from it already in the handshake (--max-startups-per-addr)",
				nc.RemoteAddr(), re.Code, s.lis.starts.PerAddr())
			s.lis.starts.RefuseBounded(nc, re)
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
	return t.Len()
}

// maxStartups is the global and per-source caps of the startup table:
// Config's, or the defaults.
func (s *Server) maxStartups() (all, perAddr int) {
	all, perAddr = s.cfg.MaxStartups, s.cfg.MaxStartupsPerAddr
	if all <= 0 {
		all = admit.DefaultMaxStartups()
	}
	if perAddr <= 0 {
		perAddr = admit.DefaultMaxStartupsPerAddr
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
	if len(s.cfg.Allow) > 0 && !admit.Allowed(s.cfg.Allow, peer) {
		return &proto.RemoteError{Code: codeNotAllowed, Msg: fmt.Sprintf("client %s is not in the server's --allow list", peer)}
	}
	if len(s.cfg.AuthKey) == 0 && !s.cfg.Exposed && !peer.IsLoopback() {
		return &proto.RemoteError{Code: codeProtected, Msg: fmt.Sprintf("the server is in protected mode: without a key and without --bind "+
			"it serves loopback clients only (this client is %s). To open it, start it with --auth-key-file FILE "+
			"(and give clients the same key), or with --bind ADDR to serve any client that reaches ADDR", peer)}
	}
	return nil
}

type printfer interface{ Printf(string, ...any) }

// RemoteError codes of connections refused before their handshake.
const (
	codeProtected  = "protected"   // protected mode: a non-loopback client and no key, no --bind
	codeNotAllowed = "not-allowed" // the client's address is outside --allow
)

// dropStartup tells the oldest connection why it goes and closes it, which
// ends its session's handshake. The write may race the session's own reply
// frame; it has a short deadline, and the close follows either way.
func (s *Server) dropStartup(st *admit.Entry, newer net.Addr) {
	st.Dropped.Store(true)
	n := s.lis.starts.Max()
	s.lis.limit.Printf(s.log, "dropped", "client %s: dropped after %v unauthenticated: %d connections in the handshake, the server's limit (--max-startups); making room for %s",
		st.NC.RemoteAddr(), time.Since(st.At).Round(time.Millisecond), n, newer)
	go func() {
		c := proto.NewConn(st.NC, 200*time.Millisecond)
		c.SendError(&proto.RemoteError{Code: admit.CodeDropped, Msg: fmt.Sprintf(
			"dropped: the server had %d connections in the handshake (server --max-startups %d), and this was the oldest", n, n)})
		st.NC.Close()
	}()
}
