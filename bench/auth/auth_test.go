package auth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
)

// handshakePair runs ClientHandshake against ServerHandshake over net.Pipe;
// the server side sends the hello-ack with its proof, as a session does.
func handshakePair(t *testing.T, clientKey, serverKey []byte) (proto.HelloAck, error, error) {
	t.Helper()
	a, b := net.Pipe()
	cc, sc := proto.NewConn(a, 2*time.Second), proto.NewConn(b, 2*time.Second)
	defer cc.Close()
	defer sc.Close()
	serr := make(chan error, 1)
	go func() {
		_, proof, err := ServerHandshake(sc, serverKey)
		if err == nil {
			err = sc.Send(proto.MsgHelloAck, proto.HelloAck{Version: proto.Version, Proof: proof})
		} else {
			sc.Close() // as a session does after a refusal
		}
		serr <- err
	}()
	ack, cerr := ClientHandshake(cc, clientKey, "test", 2*time.Second)
	cc.Close()
	return ack, cerr, <-serr
}

func TestHandshake(t *testing.T) {
	k1, k2 := []byte("0123456789abcdef-one"), []byte("0123456789abcdef-two")
	for _, tc := range []struct {
		name                 string
		clientKey, serverKey []byte
		clientErr, serverErr string // "" = success
		code                 string // the RemoteError code the client gets
	}{
		{"no keys", nil, nil, "", "", ""},
		{"same key", k1, k1, "", "", ""},
		{"wrong key", k1, k2, "authentication failed: the client's key is not the server's", "authentication failed", CodeAuth},
		{"key on the client only", k1, nil, "this server has none", "this server has none", CodeAuth},
		{"key on the server only", nil, k2, "this server requires a key", "requires a key", CodeAuth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ack, cerr, serr := handshakePair(t, tc.clientKey, tc.serverKey)
			if tc.clientErr == "" {
				if cerr != nil || serr != nil {
					t.Fatalf("client %v, server %v; want success", cerr, serr)
				}
				if (len(ack.Proof) > 0) != (tc.clientKey != nil) {
					t.Errorf("hello-ack proof %x with client key %q", ack.Proof, tc.clientKey)
				}
				return
			}
			if cerr == nil || !strings.Contains(cerr.Error(), tc.clientErr) {
				t.Errorf("client: %v, want %q", cerr, tc.clientErr)
			}
			var re *proto.RemoteError
			if !errors.As(cerr, &re) || re.Code != tc.code {
				t.Errorf("client: %v, want a RemoteError with code %q", cerr, tc.code)
			}
			var ae *Error
			if !errors.As(serr, &ae) || !strings.Contains(serr.Error(), tc.serverErr) {
				t.Errorf("server: %v, want an Error with %q", serr, tc.serverErr)
			}
		})
	}
}

// TestHandshakeBadServer: a client with a key accepts no server that
// cannot prove it, and says so.
func TestHandshakeBadServer(t *testing.T) {
	key := []byte("0123456789abcdef")
	for _, tc := range []struct {
		name string
		play func(c *proto.Conn) // after reading the client's hello
		want string
	}{
		{"skips the challenge", func(c *proto.Conn) { c.Send(proto.MsgHelloAck, proto.HelloAck{Version: proto.Version}) }, "did not ask for it"},
		{"wrong proof", func(c *proto.Conn) {
			c.Send(proto.MsgChallenge, proto.Challenge{Auth: proto.AuthHMAC, Nonce: make([]byte, proto.NonceLen)})
			c.Recv(proto.MsgAuth, &proto.Auth{})
			c.Send(proto.MsgHelloAck, proto.HelloAck{Version: proto.Version, Proof: make([]byte, proto.MACLen)})
		}, "the server's proof of the key does not match"},
		{"no proof", func(c *proto.Conn) {
			c.Send(proto.MsgChallenge, proto.Challenge{Auth: proto.AuthHMAC, Nonce: make([]byte, proto.NonceLen)})
			c.Recv(proto.MsgAuth, &proto.Auth{})
			c.Send(proto.MsgHelloAck, proto.HelloAck{Version: proto.Version})
		}, "does not match"},
		{"short nonce", func(c *proto.Conn) {
			c.Send(proto.MsgChallenge, proto.Challenge{Auth: proto.AuthHMAC, Nonce: []byte{1}})
		}, "1-byte nonce"},
		{"other method", func(c *proto.Conn) {
			c.Send(proto.MsgChallenge, proto.Challenge{Auth: "md5", Nonce: make([]byte, proto.NonceLen)})
		}, `"md5"`},
		{"another message", func(c *proto.Conn) { c.Send(proto.MsgReady, proto.Ready{}) }, "expected hello-ack or challenge, got ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := net.Pipe()
			cc, sc := proto.NewConn(a, 2*time.Second), proto.NewConn(b, 2*time.Second)
			defer cc.Close()
			go func() {
				defer sc.Close()
				var h proto.Hello
				if sc.Recv(proto.MsgHello, &h) != nil {
					return
				}
				tc.play(sc)
				io.Copy(io.Discard, b) // take the client's error frame
			}()
			_, err := ClientHandshake(cc, key, "test", 2*time.Second)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("client: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestHandshakeBadClient: what a server refuses in a hello, and that the
// refusal says why.
func TestHandshakeBadClient(t *testing.T) {
	key := []byte("0123456789abcdef")
	for _, tc := range []struct {
		name  string
		hello proto.Hello
		key   []byte
		want  string
	}{
		{"old version", proto.Hello{Version: 1}, nil, "protocol version mismatch: client 1, server " + strconv.Itoa(proto.Version)},
		{"short nonce", proto.Hello{Version: proto.Version, Auth: proto.AuthHMAC, Nonce: []byte{1, 2}}, key, "nonce has 2 bytes, want 32"},
		{"other method", proto.Hello{Version: proto.Version, Auth: "plain", Nonce: make([]byte, 32)}, key, `offers authentication "plain"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := net.Pipe()
			cc, sc := proto.NewConn(a, 2*time.Second), proto.NewConn(b, 2*time.Second)
			defer cc.Close()
			serr := make(chan error, 1)
			go func() {
				defer sc.Close()
				_, _, err := ServerHandshake(sc, tc.key)
				serr <- err
			}()
			if err := cc.Send(proto.MsgHello, tc.hello); err != nil {
				t.Fatal(err)
			}
			err := cc.Recv(proto.MsgHelloAck, nil)
			var re *proto.RemoteError
			if !errors.As(err, &re) || !strings.Contains(re.Msg, tc.want) {
				t.Errorf("client got %v, want a refusal with %q", err, tc.want)
			}
			if err := <-serr; err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("server: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestAuthMAC: the proofs depend on the key, both nonces and the role.
func TestAuthMAC(t *testing.T) {
	k, n1, n2 := []byte("key"), bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	base := authMAC(k, authLabelClient, n1, n2)
	if len(base) != proto.MACLen {
		t.Fatalf("MAC of %d bytes", len(base))
	}
	for name, other := range map[string][]byte{
		"server label":   authMAC(k, authLabelServer, n1, n2),
		"other key":      authMAC([]byte("kez"), authLabelClient, n1, n2),
		"nonces swapped": authMAC(k, authLabelClient, n2, n1),
	} {
		if bytes.Equal(base, other) {
			t.Errorf("%s: same MAC", name)
		}
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	for _, tc := range []struct {
		name, path, env string
		want            string // the key, or the error
		err, warn       bool
	}{
		{"file", file("k", "0123456789abcdef0123\n", 0o600), "", "0123456789abcdef0123", false, false},
		{"crlf", file("crlf", "0123456789abcdef\r\n", 0o400), "", "0123456789abcdef", false, false},
		{"short key warns", file("short", "abc", 0o600), "", "abc", false, true},
		{"file wins over env", file("k2", "from-file-0123456789", 0o600), "from-env-0123456789", "from-file-0123456789", false, false},
		{"env", "", "from-env-0123456789", "from-env-0123456789", false, false},
		{"empty file", file("empty", "\n", 0o600), "", "--auth-key-file " + filepath.Join(dir, "empty") + ": empty key", true, false},
		{"world readable", file("world", "0123456789abcdef", 0o644), "", "readable or writable by group or others (mode 0644): chmod 600", true, false},
		{"group writable", file("group", "0123456789abcdef", 0o620), "", "mode 0620", true, false},
		{"missing", filepath.Join(dir, "nosuch"), "", "no such file", true, false},
		{"directory", dir, "", "not a regular file", true, false},
		{"too large", file("big", strings.Repeat("k", 5000), 0o600), "", "larger than 4096 bytes", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(KeyEnv, tc.env)
			} else {
				t.Setenv(KeyEnv, "")
				os.Unsetenv(KeyEnv)
			}
			key, warn, err := LoadKey(tc.path)
			if tc.err {
				var ke *KeyError
				if !errors.As(err, &ke) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("LoadKey: %v, want a KeyError with %q", err, tc.want)
				}
				return
			}
			if err != nil || string(key) != tc.want || (warn != "") != tc.warn {
				t.Fatalf("LoadKey: %q, warn %q, %v; want %q (warn %v)", key, warn, err, tc.want, tc.warn)
			}
		})
	}
	t.Run("none", func(t *testing.T) {
		t.Setenv(KeyEnv, "")
		os.Unsetenv(KeyEnv)
		if key, _, err := LoadKey(""); key != nil || err != nil {
			t.Fatalf("no file, no variable: %q %v", key, err)
		}
	})
}

// streamConn is a net.Conn that reads a fixed stream and discards writes.
type streamConn struct {
	io.Reader
}

func (streamConn) Write(p []byte) (int, error)      { return len(p), nil }
func (streamConn) Close() error                     { return nil }
func (streamConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (streamConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (streamConn) SetDeadline(time.Time) error      { return nil }
func (streamConn) SetReadDeadline(time.Time) error  { return nil }
func (streamConn) SetWriteDeadline(time.Time) error { return nil }

// frames encodes a sequence of (type, payload) as a byte stream.
func frames(f testing.TB, msgs ...any) []byte {
	var out []byte
	for i := 0; i+1 < len(msgs); i += 2 {
		var err error
		if out, err = proto.AppendFrame(out, msgs[i].(proto.MsgType), []byte(msgs[i+1].(string))); err != nil {
			f.Fatal(err)
		}
	}
	return out
}

// FuzzHandshake feeds arbitrary bytes to both sides of the handshake as
// the peer's stream: nothing panics, and with a key neither side ever
// accepts (the fuzzer cannot know the key's MAC over a fresh nonce).
func FuzzHandshake(f *testing.F) {
	nonce := `"` + strings.Repeat("A", 43) + `="`
	f.Add(frames(f, proto.MsgHello, `{"version":2,"tool":"x","host":"h"}`))
	f.Add(frames(f, proto.MsgHello, `{"version":2,"tool":"x","host":"h","auth":"hmac-sha256","nonce":`+nonce+`}`,
		proto.MsgAuth, `{"mac":`+nonce+`}`))
	f.Add(frames(f, proto.MsgChallenge, `{"auth":"hmac-sha256","nonce":`+nonce+`}`,
		proto.MsgHelloAck, `{"version":2,"host":"h","device":"d","proof":`+nonce+`}`))
	f.Add(frames(f, proto.MsgHelloAck, `{"version":2,"host":"h","device":"d"}`))
	f.Add(frames(f, proto.MsgHello, `{"version":2,"nonce":"!!"}`))
	f.Add([]byte("GET / HTTP/1.0\r\n\r\n"))
	key := []byte("fuzzing-key-0123456789")
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, _, err := ServerHandshake(proto.NewConn(streamConn{bytes.NewReader(b)}, time.Second), key); err == nil {
			t.Fatalf("server accepted a stream without the key: %q", b)
		}
		if _, err := ClientHandshake(proto.NewConn(streamConn{bytes.NewReader(b)}, time.Second), key, "h", time.Second); err == nil {
			t.Fatalf("client accepted a server without the key: %q", b)
		}
		ServerHandshake(proto.NewConn(streamConn{bytes.NewReader(b)}, time.Second), nil)
		ClientHandshake(proto.NewConn(streamConn{bytes.NewReader(b)}, time.Second), nil, "h", time.Second)
	})
}

// TestHandshakeOldFrames: a client that speaks protocol version 1 (its
// frames' header) is told the mismatch in an error frame.
func TestHandshakeOldFrames(t *testing.T) {
	a, b := net.Pipe()
	sc := proto.NewConn(b, 2*time.Second)
	defer a.Close()
	go func() {
		defer sc.Close()
		ServerHandshake(sc, nil)
	}()
	hello := []byte(`{"version":1,"tool":"old","host":"h"}`)
	frame, _ := proto.AppendFrame(nil, proto.MsgHello, hello)
	frame[5] = 1 // header version 1
	go a.Write(frame)
	typ, payload, err := proto.ReadFrame(a)
	if err != nil || typ != proto.MsgError || !strings.Contains(string(payload), fmt.Sprintf("protocol version 1, this side speaks version %d", proto.Version)) {
		t.Fatalf("answer to a version-1 hello: %v %q %v", typ, payload, err)
	}
}
