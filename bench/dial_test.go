package bench

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/admit"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/server"
)

// dropFirst drops its first connection as the server drops the oldest
// startup (an error frame with code "dropped"), then delegates.
type dropFirst struct {
	net.Listener
	once sync.Once
}

func (l *dropFirst) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		first := false
		l.once.Do(func() { first = true })
		if !first {
			return c, nil
		}
		go admit.Refuse(c, &proto.RemoteError{Code: admit.CodeDropped, Msg: "dropped: test"})
	}
}

// TestDialRetriesDropped: a client dropped as the oldest startup tries
// again, as when the server is busy, and gets in.
func TestDialRetriesDropped(t *testing.T) {
	srv, err := server.New(server.Config{GIDIndex: -1, Port: 1, Log: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, &dropFirst{Listener: ln}) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	cl, err := Dial(context.Background(), ln.Addr().String(), ClientConfig{Transport: "tcp"}, 3*time.Second)
	if err != nil {
		t.Fatalf("Dial after a drop: %v", err)
	}
	cl.Close()
}
