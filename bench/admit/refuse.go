package admit

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
)

// Refuse sends a refusal to a peer whose hello it has not read, then
// closes the connection after the peer has read it (or within a second):
// closing with the hello unread would reset the connection and lose the
// message.
func Refuse(nc net.Conn, re *proto.RemoteError) {
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

// LogLimiter prints at most one line per second per key, and counts the
// lines it held back: a flood cannot flood the log. The zero value is
// ready to use.
type LogLimiter struct {
	mu   sync.Mutex
	last map[string]time.Time
	held map[string]int
}

// Printfer is where a LogLimiter prints (a *log.Logger).
type Printfer interface{ Printf(string, ...any) }

// Printf prints through lg unless a line of key was printed in the last
// second.
func (l *LogLimiter) Printf(lg Printfer, key, format string, args ...any) {
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
