package proto

import (
	"encoding/json"
	"net"
	"testing"
	"time"
)

// TestByeReport: a bye carries an opaque report both ways through a
// connection; an empty bye (older clients) has no payload at all.
func TestByeReport(t *testing.T) {
	a, b := net.Pipe()
	ca, cb := NewConn(a, time.Second), NewConn(b, time.Second)
	defer ca.Close()
	defer cb.Close()
	go func() {
		ca.Send(MsgBye, Bye{Report: json.RawMessage(`{"results":[],"error":"x"}`)})
		ca.Send(MsgBye, nil)
	}()
	typ, payload, err := cb.RecvAny(time.Second)
	var bye Bye
	if err != nil || typ != MsgBye || cb.Decode(typ, payload, &bye) != nil || string(bye.Report) != `{"results":[],"error":"x"}` {
		t.Fatalf("%v %v %q %q", err, typ, payload, bye.Report)
	}
	if typ, payload, err = cb.RecvAny(time.Second); err != nil || typ != MsgBye || len(payload) != 0 {
		t.Fatalf("empty bye: %v %v %q", err, typ, payload)
	}
}
