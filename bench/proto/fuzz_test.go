package proto

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzReadFrame feeds arbitrary bytes to ReadFrame. It must never panic or
// return a payload longer than MaxPayload; an accepted frame must re-encode
// with AppendFrame to a prefix of the input; a one-byte-at-a-time reader must
// give the same result.
func FuzzReadFrame(f *testing.F) {
	for _, tt := range protoTestMessages {
		f.Add(protoMustFrame(f, tt.typ, []byte(`{"k":1}`)))
	}
	valid := protoMustFrame(f, MsgHello, []byte(`{"version":1,"tool":"rdmabench","host":"a"}`))
	f.Add(protoMustFrame(f, MsgReady, nil))
	f.Add(append(protoMustFrame(f, MsgBye, nil), valid...)) // two frames
	f.Add([]byte{})
	f.Add(valid[:5])                                                  // truncated header
	f.Add(valid[:len(valid)-3])                                       // truncated payload
	f.Add(protoHeader(Magic, Version, uint16(MsgResult), 0xFFFFFFFF)) // oversized
	f.Add(protoHeader(Magic, Version, uint16(MsgResult), MaxPayload))
	f.Add(protoHeader(0x52444D43, Version, 1, 0)) // bad magic
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add(protoHeader(Magic, Version+1, 1, 0)) // wrong version
	f.Add(protoHeader(Magic, Version, 0, 0))   // unknown types
	f.Add(protoHeader(Magic, Version, 10, 3))
	f.Add(protoHeader(Magic, Version, uint16(MsgDoctor), 0))   // a doctor request
	f.Add(protoHeader(Magic, Version, uint16(MsgDoctor)+1, 0)) // one past the last type
	f.Add(protoMustFrame(f, MsgDoctor, []byte(`{"host":{},"findings":[]}`)))
	f.Add(protoMustFrame(f, MsgDoctor, []byte(`{"ports":true}`)))                                 // a request for every port
	f.Add(protoMustFrame(f, MsgDoctor, []byte(`{"host":{},"findings":[],"ports":[{"rail":0}]}`))) // an answer with ports

	f.Fuzz(func(t *testing.T, data []byte) {
		typ, payload, err := ReadFrame(bytes.NewReader(data))
		typ1, payload1, err1 := ReadFrame(iotest.OneByteReader(bytes.NewReader(data)))
		if typ != typ1 || !bytes.Equal(payload, payload1) || (err == nil) != (err1 == nil) {
			t.Fatalf("one-byte reader differs: %v %d %v vs %v %d %v", typ, len(payload), err, typ1, len(payload1), err1)
		}
		if err != nil {
			if err.Error() != err1.Error() {
				t.Fatalf("one-byte reader error differs: %q vs %q", err, err1)
			}
			if (err == io.EOF) != (len(data) == 0) {
				t.Fatalf("io.EOF for %d input bytes: %v", len(data), err)
			}
			if len(data) > 0 {
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("error %v (%T) is not a *Error", err, err)
				}
			}
			if len(data) > 0 && len(data) < frameHeaderLen && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("short header (%d bytes) gave %v, want io.ErrUnexpectedEOF", len(data), err)
			}
			if payload != nil || typ != 0 {
				t.Fatalf("error %v with type %v and %d payload bytes", err, typ, len(payload))
			}
			return
		}
		if len(payload) > MaxPayload {
			t.Fatalf("payload of %d bytes exceeds MaxPayload", len(payload))
		}
		if !typ.known() {
			t.Fatalf("accepted unknown type %d", typ)
		}
		frame, err := AppendFrame(nil, typ, payload)
		if err != nil {
			t.Fatalf("AppendFrame of an accepted frame: %v", err)
		}
		if !bytes.HasPrefix(data, frame) {
			t.Fatalf("re-encoded frame is not a prefix of the input:\n  in: %q\n out: %q", data, frame)
		}
	})
}
