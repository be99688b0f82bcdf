// Package peerln is a test helper: a TCP listener on 127.0.0.1 whose
// connections report a chosen remote address, so that a test can be a client
// "from" any address (the server's admission, --allow, per-address caps).
package peerln

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
)

// Listener is a TCP listener on 127.0.0.1 whose accepted connections report
// Peer as their remote address.
type Listener struct {
	net.Listener
	Peer net.Addr
}

// Listen listens on 127.0.0.1 (a free port) as if every client came from
// peer ("ADDR:PORT"); the test fails if it cannot.
func Listen(t testing.TB, peer string) *Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &Listener{ln, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(peer))}
}

type addrConn struct {
	net.Conn
	remote net.Addr
}

func (c addrConn) RemoteAddr() net.Addr { return c.remote }

// Accept accepts a connection that reports l.Peer as its remote address.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return addrConn{c, l.Peer}, nil
}

// Dial connects to l as a control-protocol client (2 s per message).
func (l *Listener) Dial(t testing.TB) *proto.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", l.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return proto.NewConn(c, 2*time.Second)
}
