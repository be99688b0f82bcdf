// Package proto is the guest agent's wire protocol (internal/vm): a client asks
// an agent to run one command and receives its output and exit status. It runs
// over the host's virtio-serial port, over TCP between guests (port Port), and
// over the bed's unix socket (vmexec bed). Pure Go and small: the test side
// (internal/testutil/vmtest) imports it.
//
// A frame is one type byte, a 4-byte big-endian payload length and the payload
// (at most MaxPayload bytes). A conversation: the client sends TRun (JSON Run);
// the agent answers with TStdout/TStderr frames (raw bytes) and one TExit (JSON
// Exit). While the command runs the client may send TSignal (one byte: the
// signal number). A client that goes away kills the command (TCP, unix); on the
// serial port, which never goes away, the host sends TSignal 9 instead.
package proto

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Port is the agent's TCP port on its wire address (pair, mesh).
const Port = 7700

// MaxPayload bounds one frame's payload: a decoder rejects longer ones before
// allocating.
const MaxPayload = 1 << 20

// Frame types.
const (
	TRun      byte = 'R' // client -> agent: Run (JSON)
	TStdout   byte = 'O' // agent -> client: bytes of the command's stdout
	TStderr   byte = 'E' // agent -> client: bytes of the command's stderr
	TExit     byte = 'X' // agent -> client: Exit (JSON); the last frame of a run
	TSignal   byte = 'K' // client -> agent: one byte, a signal number for the command's process group
	THello    byte = 'H' // agent -> host: Hello (JSON), once, when the guest is set up
	TShutdown byte = 'Q' // host -> agent: power off (no payload)
	TLog      byte = 'L' // agent/bed -> client: a line for the client's stderr (notes, not the command's output)
)

// Run asks for one command.
type Run struct {
	Argv    []string `json:"argv"`
	Env     []string `json:"env,omitempty"`     // the whole environment (the agent adds the guest's own variables)
	Dir     string   `json:"dir,omitempty"`     // working directory ("" = /)
	Timeout float64  `json:"timeout,omitempty"` // seconds; 0: none (the client's deadline rules)
	Layout  string   `json:"layout,omitempty"`  // vmexec bed only: the bed layout the run needs
	Guest   string   `json:"guest,omitempty"`   // vmexec bed only: which guest (default g1)
	// HostTurn (vmexec bed only): the caller runs Argv on the host itself and
	// asks only for its turn. The bed answers TExit (code 0) once no guest run
	// and no other host turn is under way, and holds the turn until the
	// caller closes the connection: one test binary at a time, host or guest.
	HostTurn bool `json:"host_turn,omitempty"`
}

// Exit ends a run. Code is the exit status, 128+n for a command killed by
// signal n; Error is set when the command could not run at all (Code 127 or 126)
// or the agent failed (Code 125).
type Exit struct {
	Code  int    `json:"code"`
	Error string `json:"error,omitempty"`
}

// Hello is the agent's first frame on the serial port: the guest is ready.
type Hello struct {
	Guest   string   `json:"guest"`
	Devices []string `json:"devices,omitempty"` // RDMA devices up (rxe0, rxe1, siw1, rxe2)
	Notes   []string `json:"notes,omitempty"`   // things that did not come up but were optional
	BootMs  int64    `json:"boot_ms"`           // guest uptime when ready
}

// ErrTooLong is returned for a frame whose length exceeds MaxPayload.
var ErrTooLong = errors.New("proto: frame longer than MaxPayload")

// ReadFrame reads one frame.
func ReadFrame(r io.Reader) (typ byte, payload []byte, err error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > MaxPayload {
		return 0, nil, fmt.Errorf("%w: type %q, %d bytes (limit %d)", ErrTooLong, h[0], n, MaxPayload)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return h[0], payload, nil
}

// Writer writes whole frames; safe for concurrent use.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a frame writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Frame writes one frame (payloads over MaxPayload are split for data frames,
// refused for others).
func (w *Writer) Frame(typ byte, payload []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		n := len(payload)
		if n > MaxPayload {
			if typ != TStdout && typ != TStderr {
				return fmt.Errorf("%w: type %q, %d bytes (limit %d)", ErrTooLong, typ, n, MaxPayload)
			}
			n = MaxPayload
		}
		buf := make([]byte, 5+n)
		buf[0] = typ
		binary.BigEndian.PutUint32(buf[1:], uint32(n))
		copy(buf[5:], payload[:n])
		if _, err := w.w.Write(buf); err != nil {
			return err
		}
		payload = payload[n:]
		if len(payload) == 0 {
			return nil
		}
	}
}

// JSON writes v as one frame of type typ.
func (w *Writer) JSON(typ byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.Frame(typ, b)
}

// Stream is an io.Writer that sends its bytes as frames of one type.
type Stream struct {
	W   *Writer
	Typ byte
}

func (s Stream) Write(p []byte) (int, error) {
	if err := s.W.Frame(s.Typ, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// DecodeRun parses a TRun payload and checks it.
func DecodeRun(p []byte) (Run, error) {
	var r Run
	if err := json.Unmarshal(p, &r); err != nil {
		return Run{}, fmt.Errorf("proto: bad run request: %w", err)
	}
	if len(r.Argv) == 0 || r.Argv[0] == "" {
		return Run{}, errors.New("proto: run request without a command (argv empty)")
	}
	if r.Timeout < 0 {
		return Run{}, fmt.Errorf("proto: run request timeout %v s is negative", r.Timeout)
	}
	return r, nil
}

// Client runs one command over a connection to an agent (or the bed): R and W
// are the connection's two directions (R unbuffered or owned by this client
// for the run: Wait reads nothing past the TExit frame). Stdout and Stderr
// receive the command's output; Log, if set, receives TLog lines.
type Client struct {
	R      io.Reader
	W      *Writer
	Stdout io.Writer
	Stderr io.Writer
	Log    io.Writer
}

// Start sends the request.
func (c *Client) Start(run Run) error {
	return c.W.JSON(TRun, run)
}

// Signal sends a signal to the running command.
func (c *Client) Signal(sig int) error {
	if sig <= 0 || sig > 64 {
		return fmt.Errorf("proto: signal %d out of range 1..64", sig)
	}
	return c.W.Frame(TSignal, []byte{byte(sig)})
}

// Wait copies output until the TExit frame and returns it. A connection that
// ends first is an error.
func (c *Client) Wait() (Exit, error) {
	for {
		typ, p, err := ReadFrame(c.R)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return Exit{}, fmt.Errorf("agent connection lost before the exit status: %w", err)
		}
		switch typ {
		case TStdout:
			if c.Stdout != nil {
				c.Stdout.Write(p)
			}
		case TStderr:
			if c.Stderr != nil {
				c.Stderr.Write(p)
			}
		case TLog:
			if c.Log != nil {
				c.Log.Write(p)
			}
		case TExit:
			var e Exit
			if err := json.Unmarshal(p, &e); err != nil {
				return Exit{}, fmt.Errorf("proto: bad exit frame: %w", err)
			}
			return e, nil
		default:
			return Exit{}, fmt.Errorf("proto: unexpected frame type %q during a run", typ)
		}
	}
}
