package proto

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// Sample payloads; the real message structs live elsewhere in the package.
type protoTestHello struct {
	Version int    `json:"version"`
	Tool    string `json:"tool"`
	Host    string `json:"host"`
}

type protoTestParams struct {
	Op         string `json:"op"`
	Size       int    `json:"size"`
	Iterations int    `json:"iterations"`
	QPs        int    `json:"qps"`
}

type protoTestQPInfo struct {
	QPN  uint32 `json:"qpn"`
	PSN  uint32 `json:"psn"`
	GID  []byte `json:"gid"`
	RKey uint32 `json:"rkey"`
	Addr uint64 `json:"addr"`
	Len  uint64 `json:"len"`
}

type protoTestResult struct {
	Bytes     uint64   `json:"bytes"`
	Seconds   float64  `json:"seconds"`
	Histogram []byte   `json:"histogram"`
	Notes     []string `json:"notes,omitempty"`
}

type protoTestEmpty struct{}

// protoTestMessages has one sample per message type. newV returns a fresh
// pointer to decode into; nil means the message has no payload.
var protoTestMessages = []struct {
	name string
	typ  MsgType
	v    any
	newV func() any
}{
	{"hello", MsgHello, &protoTestHello{Version: 1, Tool: "rdmabench", Host: "node1"}, func() any { return new(protoTestHello) }},
	{"hello-ack", MsgHelloAck, &protoTestHello{Version: 1, Tool: "rdmabench", Host: "node2"}, func() any { return new(protoTestHello) }},
	{"test", MsgTest, &protoTestParams{Op: "write", Size: 65536, Iterations: 1000, QPs: 4}, func() any { return new(protoTestParams) }},
	{"qp-info", MsgQPInfo, &protoTestQPInfo{QPN: 0xabcdef, PSN: 0x123456, GID: bytes.Repeat([]byte{0xfe}, 16), RKey: 0xdeadbeef, Addr: 1<<47 + 4096, Len: 1 << 30}, func() any { return new(protoTestQPInfo) }},
	{"ready", MsgReady, nil, nil},
	{"result", MsgResult, &protoTestResult{Bytes: 1 << 40, Seconds: 10.5, Histogram: bytes.Repeat([]byte("HISTv2"), 20000), Notes: []string{"software RDMA"}}, func() any { return new(protoTestResult) }},
	{"error", MsgError, &RemoteError{Msg: "device rxe0 not found", Code: "device"}, nil},
	{"bye", MsgBye, &protoTestEmpty{}, func() any { return new(protoTestEmpty) }},
	{"verify", MsgVerify, &Verify{QP: 3, Message: 63, Mismatch: &Mismatch{Offset: 1000, Expected: 0x3c, Seen: 0xc3, Len: 65536}}, func() any { return new(Verify) }},
	{"verify imm", MsgVerify, &Verify{QP: 1, Message: 7, Mismatch: &Mismatch{Len: 64, Imm: &ImmMismatch{Expected: 0xdeadbeef, Seen: 7, Opcode: "SEND_WITH_IMM"}}},
		func() any { return new(Verify) }},
	{"doctor", MsgDoctor, &Doctor{Host: json.RawMessage(`{"host":"a","netdev_mtu":9000}`), Findings: json.RawMessage(`[{"check":"mtu","status":"pass","detail":"x"}]`)}, func() any { return new(Doctor) }},
	{"doctor ports", MsgDoctor, &Doctor{Host: json.RawMessage(`{"host":"a"}`), Findings: json.RawMessage(`[]`), Ports: json.RawMessage(`[{"rail":0,"local":{"host":"a"},"findings":[]}]`)}, func() any { return new(Doctor) }},
	{"doctor request", MsgDoctor, &DoctorRequest{Ports: true}, func() any { return new(DoctorRequest) }},
}

// protoHeader builds a raw 12-byte header.
func protoHeader(magic uint32, version, typ uint16, length uint32) []byte {
	b := binary.BigEndian.AppendUint32(nil, magic)
	b = binary.BigEndian.AppendUint16(b, version)
	b = binary.BigEndian.AppendUint16(b, typ)
	return binary.BigEndian.AppendUint32(b, length)
}

func protoMustFrame(tb testing.TB, t MsgType, payload []byte) []byte {
	tb.Helper()
	b, err := AppendFrame(nil, t, payload)
	if err != nil {
		tb.Fatalf("AppendFrame(%v, %d bytes): %v", t, len(payload), err)
	}
	return b
}

// protoPipe returns both ends of a synchronous in-memory connection.
func protoPipe(tb testing.TB) (net.Conn, net.Conn) {
	tb.Helper()
	a, b := net.Pipe()
	tb.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// protoTCP returns both ends of a TCP loopback connection: client, server.
func protoTCP(tb testing.TB) (net.Conn, net.Conn) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Skipf("skipping, no TCP loopback: %v", err)
	}
	defer ln.Close()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := ln.Accept()
		ch <- res{c, err}
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatalf("dial: %v", err)
	}
	r := <-ch
	if r.err != nil {
		client.Close()
		tb.Fatalf("accept: %v", r.err)
	}
	tb.Cleanup(func() { client.Close(); r.c.Close() })
	return client, r.c
}

var protoTransports = []struct {
	name string
	pair func(testing.TB) (net.Conn, net.Conn)
}{
	{"pipe", protoPipe},
	{"tcp", protoTCP},
}

func TestProtoMsgTypeString(t *testing.T) {
	tests := []struct {
		name string
		t    MsgType
		want string
	}{
		{"hello", MsgHello, "hello"},
		{"hello-ack", MsgHelloAck, "hello-ack"},
		{"test", MsgTest, "test"},
		{"qp-info", MsgQPInfo, "qp-info"},
		{"ready", MsgReady, "ready"},
		{"result", MsgResult, "result"},
		{"error", MsgError, "error"},
		{"bye", MsgBye, "bye"},
		{"verify", MsgVerify, "verify"},
		{"zero", 0, "MsgType(0)"},
		{"doctor", MsgDoctor, "doctor"},
		{"unknown", 13, "MsgType(13)"},
		{"max", 0xffff, "MsgType(65535)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.t.String(); got != tt.want {
				t.Fatalf("unexpected name:\n- want: %q\n-  got: %q", tt.want, got)
			}
		})
	}
}

func TestProtoAppendFrame(t *testing.T) {
	got, err := AppendFrame([]byte("xy"), MsgReady, []byte(`{}`))
	if err != nil {
		t.Fatalf("AppendFrame: %v", err)
	}
	want := []byte("xyRDMB\x00\x04\x00\x05\x00\x00\x00\x02{}") // version 3
	if !bytes.Equal(got, want) {
		t.Fatalf("unexpected frame:\n- want: %q\n-  got: %q", want, got)
	}

	tests := []struct {
		name    string
		t       MsgType
		n       int
		wantErr error
		wantMsg string
	}{
		{"max payload", MsgResult, MaxPayload, nil, ""},
		{"too large", MsgResult, MaxPayload + 1, ErrTooLarge, "1048577 bytes, limit 1048576"},
		{"type zero", 0, 0, ErrUnknownType, "unknown message type 0"},
		{"type unknown", 13, 2, ErrUnknownType, "unknown message type 13"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("keep")
			got, err := AppendFrame(dst, tt.t, make([]byte, tt.n))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("unexpected error:\n- want: %v\n-  got: %v", tt.wantErr, err)
			}
			if err == nil {
				if len(got) != len(dst)+frameHeaderLen+tt.n {
					t.Fatalf("unexpected frame length: %d", len(got))
				}
				return
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %q does not contain %q", err, tt.wantMsg)
			}
			if string(got) != "keep" {
				t.Fatalf("dst changed on error: %q", got)
			}
		})
	}
}

func TestReadFrameRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name    string
		t       MsgType
		payload []byte
	}{
		{"empty", MsgReady, nil},
		{"small", MsgHello, []byte(`{"version":1}`)},
		{"max", MsgResult, bytes.Repeat([]byte{'a'}, MaxPayload)},
		{"odd chunk", MsgResult, bytes.Repeat([]byte{'b'}, payloadChunk*3+7)},
	} {
		for _, one := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/onebyte=%v", tt.name, one), func(t *testing.T) {
				frame := protoMustFrame(t, tt.t, tt.payload)
				var r io.Reader = bytes.NewReader(append(frame, "next"...))
				if one {
					r = iotest.OneByteReader(r)
				}
				typ, p, err := ReadFrame(r)
				if err != nil {
					t.Fatalf("ReadFrame: %v", err)
				}
				if typ != tt.t || !bytes.Equal(p, tt.payload) {
					t.Fatalf("unexpected frame: type %v, %d bytes; want %v, %d bytes", typ, len(p), tt.t, len(tt.payload))
				}
				rest, _ := io.ReadAll(r)
				if string(rest) != "next" {
					t.Fatalf("ReadFrame consumed past the frame: rest %q", rest)
				}
			})
		}
	}
}

func TestReadFrameErrors(t *testing.T) {
	valid := protoMustFrame(t, MsgTest, []byte(`{"op":"write"}`))
	tests := []struct {
		name     string
		in       []byte
		wantErr  error  // errors.Is target
		wantMsg  string // substring of the message
		wantBare bool   // the error is exactly wantErr
	}{
		{"clean EOF", nil, io.EOF, "EOF", true},
		{"truncated header 1", valid[:1], io.ErrUnexpectedEOF, "read header: unexpected EOF after 1 of 12 bytes", false},
		{"truncated header 11", valid[:11], io.ErrUnexpectedEOF, "after 11 of 12 bytes", false},
		{"header only", valid[:12], io.ErrUnexpectedEOF, "read test payload: unexpected EOF after 0 of 14 bytes", false},
		{"truncated payload", valid[:len(valid)-1], io.ErrUnexpectedEOF, "after 13 of 14 bytes", false},
		{"oversized max uint32", protoHeader(Magic, Version, uint16(MsgResult), 0xFFFFFFFF), ErrTooLarge, "4294967295 bytes, limit 1048576", false},
		{"oversized by one", protoHeader(Magic, Version, uint16(MsgResult), MaxPayload+1), ErrTooLarge, "1048577 bytes, limit 1048576", false},
		{"bad magic", protoHeader(0x52444D43, Version, 1, 0), ErrBadMagic, `bad magic 0x52444d43 ("RDMC"), want 0x52444d42 ("RDMB")`, false},
		{"http client", []byte("GET / HTTP/1.1\r\n\r\n"), ErrBadMagic, `"GET "`, false},
		{"version+1", protoHeader(Magic, Version+1, 1, 0), ErrVersion, fmt.Sprintf("peer speaks protocol version %d, this side speaks version %d", Version+1, Version), false},
		{"version 0", protoHeader(Magic, 0, 1, 0), ErrVersion, "version 0", false},
		{"type 0", protoHeader(Magic, Version, 0, 0), ErrUnknownType, "unknown message type 0", false},
		{"type 13", protoHeader(Magic, Version, 13, 0), ErrUnknownType, "unknown message type 13", false},
		{"type 65535", protoHeader(Magic, Version, 0xffff, 5), ErrUnknownType, "unknown message type 65535", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, p, err := ReadFrame(bytes.NewReader(tt.in))
			if err == nil {
				t.Fatalf("ReadFrame accepted %q: type %v, %d bytes", tt.in, typ, len(p))
			}
			if tt.wantBare && err != tt.wantErr {
				t.Fatalf("unexpected error:\n- want: %#v\n-  got: %#v", tt.wantErr, err)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("unexpected error:\n- want: wraps %v\n-  got: %v", tt.wantErr, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %q does not contain %q", err, tt.wantMsg)
			}
			if !tt.wantBare {
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("error %v (%T) is not a *Error", err, err)
				}
				if !strings.HasPrefix(err.Error(), "control: read ") {
					t.Fatalf("error %q does not name the operation", err)
				}
			}
			if p != nil || typ != 0 {
				t.Fatalf("ReadFrame returned type %v and %d bytes with an error", typ, len(p))
			}
		})
	}

	t.Run("version error fields", func(t *testing.T) {
		_, _, err := ReadFrame(bytes.NewReader(protoHeader(Magic, 7, 1, 0)))
		var ve *VersionError
		if !errors.As(err, &ve) || ve.Got != 7 || ve.Want != Version {
			t.Fatalf("unexpected error: %#v", err)
		}
	})
}

// protoAllocBytes returns the bytes allocated while running f.
func protoAllocBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestReadFrameAllocation(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		max  uint64 // bytes
	}{
		// Rejected before any payload allocation.
		{"length 0xFFFFFFFF", protoHeader(Magic, Version, uint16(MsgResult), 0xFFFFFFFF), 16 << 10},
		// Announces 1 MiB but sends 10 bytes: only the first chunk is allocated.
		{"short 1 MiB", append(protoHeader(Magic, Version, uint16(MsgResult), MaxPayload), "0123456789"...), payloadChunk + 16<<10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			got := protoAllocBytes(func() {
				for range 4 {
					_, _, err = ReadFrame(bytes.NewReader(tt.in))
				}
			})
			if err == nil {
				t.Fatal("ReadFrame accepted the frame")
			}
			if got/4 > tt.max {
				t.Fatalf("ReadFrame allocated %d bytes per call, want <= %d", got/4, tt.max)
			}
		})
	}
}

// protoSend sends in a goroutine (net.Pipe is synchronous) and returns a
// channel with Send's error.
func protoSend(c *Conn, t MsgType, v any) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- c.Send(t, v) }()
	return ch
}

func TestConnRoundTrip(t *testing.T) {
	for _, tr := range protoTransports {
		t.Run(tr.name, func(t *testing.T) {
			a, b := tr.pair(t)
			client, server := NewConn(a, 5*time.Second), NewConn(b, 5*time.Second)
			for _, tt := range protoTestMessages {
				t.Run(tt.name, func(t *testing.T) {
					sent := protoSend(client, tt.typ, tt.v)
					var got any
					if tt.newV != nil {
						got = tt.newV()
					}
					err := server.Recv(tt.typ, got)
					if serr := <-sent; serr != nil {
						t.Fatalf("Send: %v", serr)
					}
					if tt.typ == MsgError {
						var re *RemoteError
						if !errors.As(err, &re) {
							t.Fatalf("Recv(error) = %v, want *RemoteError", err)
						}
						got = re
					} else if err != nil {
						t.Fatalf("Recv: %v", err)
					}
					if !reflect.DeepEqual(got, tt.v) {
						t.Fatalf("unexpected message:\n- want: %+v\n-  got: %+v", tt.v, got)
					}
				})
			}
			// The other direction, with RecvAny + Decode.
			sent := protoSend(server, MsgQPInfo, protoTestMessages[3].v)
			typ, payload, err := client.RecvAny(time.Second)
			if serr := <-sent; serr != nil || err != nil {
				t.Fatalf("Send: %v; RecvAny: %v", serr, err)
			}
			var qi protoTestQPInfo
			if typ != MsgQPInfo {
				t.Fatalf("RecvAny type %v, want %v", typ, MsgQPInfo)
			}
			if err := client.Decode(typ, payload, &qi); err != nil || !reflect.DeepEqual(&qi, protoTestMessages[3].v) {
				t.Fatalf("Decode: %v, got %+v", err, qi)
			}
		})
	}
}

func TestConnRemoteError(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantMsg  string
		wantCode string
	}{
		{"plain", errors.New("ibv_reg_mr: cannot allocate memory"), "ibv_reg_mr: cannot allocate memory", ""},
		{"wrapped", fmt.Errorf("bench: setup: %w", os.ErrPermission), "bench: setup: permission denied", ""},
		{"with code", fmt.Errorf("refuse: %w", &RemoteError{Msg: "server busy", Code: "busy"}), "server busy", "busy"},
		{"nil", nil, "unknown error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := protoPipe(t)
			client, server := NewConn(a, 2*time.Second), NewConn(b, 2*time.Second)
			ch := make(chan error, 1)
			go func() { ch <- server.SendError(tt.err) }()
			var v protoTestQPInfo
			err := client.Recv(MsgQPInfo, &v)
			if serr := <-ch; serr != nil {
				t.Fatalf("SendError: %v", serr)
			}
			var re *RemoteError
			if !errors.As(err, &re) {
				t.Fatalf("Recv = %v (%T), want *RemoteError", err, err)
			}
			if re.Msg != tt.wantMsg || re.Code != tt.wantCode {
				t.Fatalf("unexpected remote error:\n- want: %q %q\n-  got: %q %q", tt.wantMsg, tt.wantCode, re.Msg, re.Code)
			}
			if got, want := err.Error(), "peer: "+tt.wantMsg; got != want {
				t.Fatalf("unexpected message:\n- want: %q\n-  got: %q", want, got)
			}
			// The stream stays usable after a MsgError.
			go func() { ch <- server.Send(MsgReady, nil) }()
			if err := client.Recv(MsgReady, nil); err != nil {
				t.Fatalf("Recv after error: %v", err)
			}
			<-ch
		})
	}

	t.Run("RecvAny", func(t *testing.T) {
		a, b := protoPipe(t)
		client, server := NewConn(a, 2*time.Second), NewConn(b, 2*time.Second)
		go server.SendError(errors.New("boom"))
		typ, p, err := client.RecvAny(2 * time.Second)
		var re *RemoteError
		if typ != MsgError || p != nil || !errors.As(err, &re) || re.Msg != "boom" {
			t.Fatalf("RecvAny = %v, %q, %v; want error, nil, peer: boom", typ, p, err)
		}
	})
}

func TestConnDecodeErrors(t *testing.T) {
	tests := []struct {
		name    string
		typ     MsgType
		payload []byte
		v       any
		wantMsg string
	}{
		{"unexpected type", MsgResult, []byte(`{}`), new(protoTestEmpty), "expected ready, got result"},
		{"unknown field", MsgReady, []byte(`{"qpn":1,"extra":2}`), new(protoTestQPInfo), `unknown field "extra"`},
		{"wrong type", MsgReady, []byte(`{"qpn":"x"}`), new(protoTestQPInfo), "decode ready from pipe"},
		{"truncated JSON", MsgReady, []byte(`{"qpn":1`), new(protoTestQPInfo), "truncated JSON"},
		{"trailing data", MsgReady, []byte(`{} {}`), new(protoTestEmpty), "trailing data"},
		{"empty payload", MsgReady, nil, new(protoTestEmpty), "empty payload"},
		{"payload for nil", MsgReady, []byte(`{}`), nil, "unexpected 2-byte payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := protoPipe(t)
			c := NewConn(a, 2*time.Second)
			go b.Write(protoMustFrame(t, tt.typ, tt.payload))
			err := c.Recv(MsgReady, tt.v)
			if err == nil {
				t.Fatal("Recv succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %q does not contain %q", err, tt.wantMsg)
			}
			if tt.name == "unexpected type" && !errors.Is(err, ErrUnexpectedType) {
				t.Fatalf("error %v does not wrap ErrUnexpectedType", err)
			}
			// Decode errors must not look like a closed connection.
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("decode error %v wraps an EOF", err)
			}
		})
	}
}

func TestConnDeadline(t *testing.T) {
	const timeout = 200 * time.Millisecond
	const slack = 2 * time.Second // -race and loaded CI machines

	check := func(t *testing.T, err error, start time.Time, d time.Duration, wantMsg string) {
		t.Helper()
		elapsed := time.Since(start)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("error %v is not os.ErrDeadlineExceeded", err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("error %v is not a net.Error with Timeout()", err)
		}
		if !strings.Contains(err.Error(), wantMsg) {
			t.Fatalf("error %q does not contain %q", err, wantMsg)
		}
		if elapsed < d || elapsed > d+slack {
			t.Fatalf("deadline fired after %v, want %v (+%v)", elapsed, d, slack)
		}
	}

	t.Run("silent peer tcp", func(t *testing.T) {
		a, _ := protoTCP(t)
		c := NewConn(a, timeout)
		start := time.Now()
		err := c.Recv(MsgReady, nil)
		check(t, err, start, timeout, "control: waiting for ready from "+a.RemoteAddr().String()+": i/o timeout")
		if got, want := err.Error(), "control: waiting for ready from "+a.RemoteAddr().String()+": i/o timeout"; got != want {
			t.Fatalf("unexpected message:\n- want: %q\n-  got: %q", want, got)
		}
	})

	t.Run("explicit RecvTimeout", func(t *testing.T) {
		a, _ := protoPipe(t)
		c := NewConn(a, time.Hour)
		start := time.Now()
		err := c.RecvTimeout(MsgResult, new(protoTestResult), timeout)
		check(t, err, start, timeout, "waiting for result from pipe")
	})

	t.Run("SetTimeout", func(t *testing.T) {
		a, _ := protoPipe(t)
		c := NewConn(a, time.Hour)
		c.SetTimeout(timeout)
		start := time.Now()
		_, _, err := c.RecvAny(timeout)
		check(t, err, start, timeout, "waiting for message from pipe")
		start = time.Now()
		err = c.Send(MsgReady, nil) // nobody reads the pipe
		check(t, err, start, timeout, "control: sending ready to pipe: i/o timeout")
	})

	t.Run("retry after timeout", func(t *testing.T) {
		a, b := protoTCP(t)
		c := NewConn(a, timeout)
		if err := c.Recv(MsgReady, nil); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("first Recv = %v, want timeout", err)
		}
		if _, err := b.Write(protoMustFrame(t, MsgReady, nil)); err != nil {
			t.Fatal(err)
		}
		if err := c.Recv(MsgReady, nil); err != nil {
			t.Fatalf("Recv after a timeout between frames: %v", err)
		}
	})

	t.Run("timeout inside a frame is sticky", func(t *testing.T) {
		a, b := protoTCP(t)
		c := NewConn(a, timeout)
		frame := protoMustFrame(t, MsgResult, []byte(`{"bytes":1}`))
		if _, err := b.Write(frame[:15]); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := c.Recv(MsgResult, new(protoTestResult))
		check(t, err, start, timeout, "read result payload: i/o timeout after 3 of 11 bytes")
		if _, err := b.Write(frame[15:]); err != nil {
			t.Fatal(err)
		}
		err2 := c.Recv(MsgResult, new(protoTestResult))
		if !errors.Is(err2, os.ErrDeadlineExceeded) {
			t.Fatalf("Recv after a broken frame = %v, want the sticky error", err2)
		}
	})
}

func TestConnEOF(t *testing.T) {
	for _, tr := range protoTransports {
		// net.Pipe's SetReadDeadline fails with io.ErrClosedPipe once the
		// peer closed: the clean close is TCP's case only
		if tr.name != "pipe" {
			t.Run(tr.name+"/clean", func(t *testing.T) {
				a, b := tr.pair(t)
				c := NewConn(a, 2*time.Second)
				b.Close()
				_, _, err := c.RecvAny(0)
				if !errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("RecvAny after peer close = %v, want io.EOF", err)
				}
				if !strings.Contains(err.Error(), "connection closed by peer") {
					t.Fatalf("unexpected message %q", err)
				}
			})
		}
		t.Run(tr.name+"/mid-header", func(t *testing.T) {
			a, b := tr.pair(t)
			c := NewConn(a, 2*time.Second)
			go func() { b.Write([]byte("RDMB\x00")); b.Close() }()
			err := c.Recv(MsgHello, new(protoTestHello))
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Recv = %v, want io.ErrUnexpectedEOF", err)
			}
			if !strings.Contains(err.Error(), "read header: unexpected EOF after 5 of 12 bytes") {
				t.Fatalf("unexpected message %q", err)
			}
		})
	}
}

func TestConnRejectsMalformed(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		wantErr error
	}{
		{"bad magic", []byte("SSH-2.0-OpenSSH_9.2\r\n"), ErrBadMagic},
		{"version", protoHeader(Magic, Version+1, 1, 0), ErrVersion},
		{"too large", protoHeader(Magic, Version, 1, 0xFFFFFFFF), ErrTooLarge},
		{"unknown type", protoHeader(Magic, Version, 42, 0), ErrUnknownType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := protoTCP(t)
			c := NewConn(a, 2*time.Second)
			if _, err := b.Write(tt.in); err != nil {
				t.Fatal(err)
			}
			err := c.Recv(MsgHello, new(protoTestHello))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Recv = %v, want %v", err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "control: waiting for hello from 127.0.0.1:") {
				t.Fatalf("unexpected message %q", err)
			}
			// Framing is lost: the next receive fails the same way at once.
			if err2 := c.Recv(MsgHello, new(protoTestHello)); !errors.Is(err2, tt.wantErr) {
				t.Fatalf("second Recv = %v, want %v", err2, tt.wantErr)
			}
		})
	}
}

func TestConnSendTooLarge(t *testing.T) {
	a, b := protoPipe(t)
	c, peer := NewConn(a, time.Second), NewConn(b, time.Second)
	err := c.Send(MsgResult, &protoTestResult{Histogram: make([]byte, MaxPayload)}) // base64 grows it
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Send = %v, want ErrTooLarge", err)
	}
	// Nothing was written: the stream is still usable.
	ch := protoSend(c, MsgReady, nil)
	if err := peer.Recv(MsgReady, nil); err != nil {
		t.Fatalf("Recv after a refused Send: %v", err)
	}
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
}

func TestConnConcurrentSend(t *testing.T) {
	a, b := protoTCP(t)
	c, peer := NewConn(a, 5*time.Second), NewConn(b, 5*time.Second)
	const senders, each = 8, 50
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			for j := range each {
				v := &protoTestParams{Op: "write", Size: i, Iterations: j, QPs: 1}
				if err := c.Send(MsgTest, v); err != nil {
					t.Errorf("Send: %v", err)
					return
				}
			}
		})
	}
	seen := make(map[[2]int]bool)
	for range senders * each {
		var v protoTestParams
		if err := peer.Recv(MsgTest, &v); err != nil {
			t.Fatalf("Recv: %v", err)
		}
		seen[[2]int{v.Size, v.Iterations}] = true
	}
	wg.Wait()
	if len(seen) != senders*each {
		t.Fatalf("got %d distinct messages, want %d", len(seen), senders*each)
	}
}

func TestConnClose(t *testing.T) {
	for _, tr := range protoTransports {
		t.Run(tr.name, func(t *testing.T) {
			a, b := tr.pair(t)
			c := NewConn(a, time.Second)
			if c.RemoteAddr() != a.RemoteAddr() || c.LocalAddr() != a.LocalAddr() {
				t.Fatalf("addresses: got %v/%v, want %v/%v", c.LocalAddr(), c.RemoteAddr(), a.LocalAddr(), a.RemoteAddr())
			}
			// A blocked receive is released by Close.
			done := make(chan error, 1)
			go func() { done <- c.Recv(MsgReady, nil) }()
			time.Sleep(20 * time.Millisecond)
			if err := c.Close(); err != nil {
				t.Fatalf("first Close: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("Recv succeeded on a closed Conn")
				}
			case <-time.After(2 * time.Second):
				t.Fatal("Close did not release a blocked Recv")
			}
			if err := c.Send(MsgBye, nil); err == nil {
				t.Fatal("Send succeeded on a closed Conn")
			}
			// The peer sees a clean EOF (net.Pipe fails SetReadDeadline
			// with io.ErrClosedPipe instead).
			if _, _, err := NewConn(b, time.Second).RecvAny(time.Second); tr.name == "tcp" && !errors.Is(err, io.EOF) || err == nil {
				t.Fatalf("peer RecvAny = %v, want io.EOF", err)
			}
		})
	}
	t.Run("tcp errors wrap net.ErrClosed", func(t *testing.T) {
		a, _ := protoTCP(t)
		c := NewConn(a, time.Second)
		c.Close()
		if err := c.Send(MsgBye, nil); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Send after Close = %v, want net.ErrClosed", err)
		}
		if err := c.Recv(MsgBye, nil); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Recv after Close = %v, want net.ErrClosed", err)
		}
	})
}

func BenchmarkFrameRoundTrip(b *testing.B) {
	for _, size := range []int{0, 64, 4 << 10, 100 << 10} {
		b.Run(fmt.Sprintf("frame/%dB", size), func(b *testing.B) {
			payload := bytes.Repeat([]byte{'x'}, size)
			buf := make([]byte, 0, frameHeaderLen+size)
			var r bytes.Reader
			b.SetBytes(int64(frameHeaderLen + size))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				buf, err = AppendFrame(buf[:0], MsgResult, payload)
				if err != nil {
					b.Fatal(err)
				}
				r.Reset(buf)
				if _, _, err := ReadFrame(&r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("conn/tcp/qp-info", func(b *testing.B) {
		a, c := protoTCP(b)
		client, server := NewConn(a, 5*time.Second), NewConn(c, 5*time.Second)
		v := protoTestMessages[3].v
		b.ReportAllocs()
		for b.Loop() {
			if err := client.Send(MsgQPInfo, v); err != nil {
				b.Fatal(err)
			}
			var got protoTestQPInfo
			if err := server.Recv(MsgQPInfo, &got); err != nil {
				b.Fatal(err)
			}
		}
	})
}
