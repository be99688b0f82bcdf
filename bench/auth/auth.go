// Package auth is the control session's authentication: a shared key
// proved with a mutual challenge-response inside the handshake of
// bench/proto. Pure Go: the server and the client (bench) call
// ServerHandshake and ClientHandshake; the CLI loads the key (LoadKey).
package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
)

// Authentication of a control session: a shared key proved with a mutual
// challenge-response inside the handshake. The key never goes on the wire.
//
//	client                                   server (with a key)
//	Hello{auth: hmac-sha256, nonce Nc}  ->
//	                                    <-   Challenge{nonce Ns}
//	Auth{mac: HMAC(K, "...client..." Nc Ns)} ->  checks it (constant time)
//	                                    <-   HelloAck{proof: HMAC(K, "...server..." Nc Ns)}
//	checks the proof (constant time)
//
// The server allocates nothing for the peer (no device, no GID choice, no
// environment, no busy lock) before the client's MAC checked out. Each
// side's MAC carries its own label, so neither can be replayed as the other.
// The session is authenticated at its start; later frames are neither
// encrypted nor integrity-protected (run it on a network you trust).

// KeyEnv is the environment variable that may hold the shared key
// (used when no --auth-key-file is given).
const KeyEnv = "RDMABENCH_AUTH_KEY"

// Key sizes, bytes.
const (
	maxKeyFile = 4096 // a longer file is not a key file
	minKeyLen  = 16   // shorter keys get a warning
)

// Domain-separation labels of the two proofs.
const (
	authLabelClient = "rdmabench-auth-v1 client proof\x00"
	authLabelServer = "rdmabench-auth-v1 server proof\x00"
)

// RemoteError codes of refused handshakes.
const (
	CodeAuth    = "auth"    // key missing on one side, or another key
	CodeVersion = "version" // another protocol version
)

// KeyError is a key file or variable that cannot be used.
type KeyError struct {
	Source string // "--auth-key-file FILE" or "RDMABENCH_AUTH_KEY"
	Err    error
}

func (e *KeyError) Error() string { return e.Source + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *KeyError) Unwrap() error { return e.Err }

// Error is a handshake refused for authentication: the key is missing
// on one side, or the two sides hold different keys.
type Error struct {
	Msg string
}

func (e *Error) Error() string { return e.Msg }

// LoadKey reads the shared key from path, or when path is "" from
// $RDMABENCH_AUTH_KEY. It returns nil when neither is set. A trailing
// newline (\n or \r\n) is not part of the key. A file that cannot be read,
// is empty, larger than 4 KiB, or readable or writable by group or others
// is refused with a *KeyError. warn is a note for the user (a short key).
func LoadKey(path string) (key []byte, warn string, err error) {
	src := "--auth-key-file " + path
	if path == "" {
		v, ok := os.LookupEnv(KeyEnv)
		if !ok {
			return nil, "", nil
		}
		src, key = KeyEnv, trimNewline([]byte(v))
	} else if key, err = readKeyFile(path); err != nil {
		return nil, "", &KeyError{Source: src, Err: err}
	}
	if len(key) == 0 {
		return nil, "", &KeyError{Source: src, Err: errors.New("empty key")}
	}
	if len(key) < minKeyLen {
		warn = fmt.Sprintf("%s: the key has %d bytes; use at least %d random bytes (e.g. openssl rand -hex 32)", src, len(key), minKeyLen)
	}
	return key, warn, nil
}

// readKeyFile reads a key file after checking its kind, size and mode.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o066 != 0 {
		return nil, fmt.Errorf("readable or writable by group or others (mode %04o): chmod 600 %s", perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("larger than %d bytes: not a key file", maxKeyFile)
	}
	return trimNewline(b), nil
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// authMAC is HMAC-SHA256(key, label || clientNonce || serverNonce).
func authMAC(key []byte, label string, clientNonce, serverNonce []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	m.Write(clientNonce)
	m.Write(serverNonce)
	return m.Sum(nil)
}

// RandomKey is a fresh random key of n bytes (an in-process pair's own).
func RandomKey(n int) []byte { return randomBytes(n) }

// randomBytes is n bytes from crypto/rand.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never fails on Linux (getrandom)
	return b
}

// ServerHandshake is the server's side of the handshake up to (not
// including) the hello-ack: it reads the client's hello and, with a key,
// runs the challenge-response. It returns the hello and, with a key, the
// server's proof for the hello-ack. A refusal is sent to the client and
// returned (an *Error for authentication).
func ServerHandshake(c *proto.Conn, key []byte) (proto.Hello, []byte, error) {
	var h proto.Hello
	if err := c.Recv(proto.MsgHello, &h); err != nil {
		if errors.Is(err, proto.ErrVersion) { // our frame tells an older client the same
			c.SendError(&proto.RemoteError{Msg: err.Error(), Code: CodeVersion})
		}
		return h, nil, err
	}
	if h.Version != proto.Version {
		err := fmt.Errorf("protocol version mismatch: client %d, server %d", h.Version, proto.Version)
		c.SendError(&proto.RemoteError{Msg: err.Error(), Code: CodeVersion})
		return h, nil, err
	}
	refuse := func(msg string) (proto.Hello, []byte, error) {
		c.SendError(&proto.RemoteError{Msg: msg, Code: CodeAuth})
		return h, nil, &Error{Msg: msg}
	}
	switch {
	case len(key) == 0 && h.Auth == "":
		return h, nil, nil
	case len(key) == 0:
		return refuse("the client has a key (--auth-key-file or " + KeyEnv + ") but this server has none: " +
			"start the server with the same key, or run the client without one")
	case h.Auth == "":
		return refuse("this server requires a key: give the client the server's key with --auth-key-file FILE or " + KeyEnv)
	case h.Auth != proto.AuthHMAC:
		return refuse(fmt.Sprintf("the client offers authentication %q; this server speaks %q", h.Auth, proto.AuthHMAC))
	case len(h.Nonce) != proto.NonceLen:
		return refuse(fmt.Sprintf("the client's nonce has %d bytes, want %d", len(h.Nonce), proto.NonceLen))
	}
	sn := randomBytes(proto.NonceLen)
	if err := c.Send(proto.MsgChallenge, proto.Challenge{Auth: proto.AuthHMAC, Nonce: sn}); err != nil {
		return h, nil, err
	}
	var a proto.Auth
	if err := c.Recv(proto.MsgAuth, &a); err != nil {
		return h, nil, err
	}
	if !hmac.Equal(a.MAC, authMAC(key, authLabelClient, h.Nonce, sn)) {
		return refuse("authentication failed: the client's key is not the server's")
	}
	return h, authMAC(key, authLabelServer, h.Nonce, sn), nil
}

// ClientHandshake is the client's side of the handshake: hello, with a key
// the challenge-response, and the server's hello-ack, whose proof it checks
// when it has a key; each answer within timeout. A refusal by the server comes back as its
// *proto.RemoteError; a server that cannot prove the key gives an
// *Error (and is told so).
func ClientHandshake(c *proto.Conn, key []byte, host string, timeout time.Duration) (proto.HelloAck, error) {
	var ack proto.HelloAck
	h := proto.Hello{Version: proto.Version, Tool: "rdmabench", Host: host}
	if len(key) > 0 {
		h.Auth, h.Nonce = proto.AuthHMAC, randomBytes(proto.NonceLen)
	}
	if err := c.Send(proto.MsgHello, h); err != nil {
		return ack, err
	}
	t, payload, err := c.RecvAny(timeout)
	if err != nil {
		return ack, err
	}
	fail := func(msg string) (proto.HelloAck, error) {
		c.SendError(&proto.RemoteError{Msg: msg, Code: CodeAuth})
		return ack, &Error{Msg: msg}
	}
	switch {
	case t == proto.MsgChallenge && len(key) == 0:
		return fail("the server requires a key: give this client the server's key with --auth-key-file FILE or " + KeyEnv)
	case t == proto.MsgHelloAck && len(key) > 0:
		return fail("this client has a key but the server did not ask for it (a server without a key, or not the server you trust)")
	case t == proto.MsgHelloAck:
		return ack, c.Decode(t, payload, &ack)
	case t != proto.MsgChallenge:
		return ack, &proto.Error{Op: "handshake", Err: fmt.Errorf("%w: expected %v or %v, got %v", proto.ErrUnexpectedType, proto.MsgHelloAck, proto.MsgChallenge, t)}
	}
	var ch proto.Challenge
	if err := c.Decode(t, payload, &ch); err != nil {
		return ack, err
	}
	if ch.Auth != proto.AuthHMAC || len(ch.Nonce) != proto.NonceLen {
		return fail(fmt.Sprintf("the server's challenge (%q, %d-byte nonce) is not %s with a %d-byte nonce", ch.Auth, len(ch.Nonce), proto.AuthHMAC, proto.NonceLen))
	}
	if err := c.Send(proto.MsgAuth, proto.Auth{MAC: authMAC(key, authLabelClient, h.Nonce, ch.Nonce)}); err != nil {
		return ack, err
	}
	if err := c.Recv(proto.MsgHelloAck, &ack); err != nil {
		return ack, err
	}
	if !hmac.Equal(ack.Proof, authMAC(key, authLabelServer, h.Nonce, ch.Nonce)) {
		return fail("authentication failed: the server's proof of the key does not match: it holds another key, or it is not the server you trust")
	}
	return ack, nil
}
