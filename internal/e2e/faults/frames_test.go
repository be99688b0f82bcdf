package faults

import (
	"fmt"
	"net"
	"time"
)

// Garbage on the control port: the server drops the peer and serves the next.

func init() {
	register(
		Case{Group: "frames", Name: "garbage-then-close", Run: func(t *Fx) error {
			return afterRaw(t, func(c net.Conn) { c.Write([]byte("GET / HTTP/1.0\r\n\r\n")) })
		}},
		Case{Group: "frames", Name: "huge-length-prefix", Run: func(t *Fx) error {
			return afterRaw(t, func(c net.Conn) { c.Write([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) })
		}},
		Case{Group: "frames", Name: "connect-and-close", Run: func(t *Fx) error {
			return afterRaw(t, func(net.Conn) {})
		}},
	)
}

// afterRaw starts a server, lets bad do its worst on a raw connection,
// closes it and checks that the server still serves.
func afterRaw(t *Fx, bad func(net.Conn)) error {
	if _, err := t.Server(); err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", t.Addr("127.0.0.1"), 5*time.Second)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	bad(c)
	c.Close()
	return t.Serves()
}
