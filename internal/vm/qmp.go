package vm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// QMP: qemu's machine protocol on a unix socket (-qmp unix:PATH,server=on,wait=off),
// one JSON object per line. The bed uses it to pause a guest booted ahead of
// its turn (stop) and to let it run again (cont).

// qmpTimeout bounds one whole QMP exchange (connect, greeting, capabilities,
// the command and its answer).
const qmpTimeout = 10 * time.Second

// qmpMaxLine bounds one line read from qemu: longer is an error, not an
// allocation.
const qmpMaxLine = 64 << 10

// QMPPath is the QMP socket of the guest whose control socket is sock.
func QMPPath(sock string) string { return sock + ".qmp" }

// qmpDo connects to the QMP socket at path, negotiates capabilities and runs
// one command without arguments ("stop", "cont"); qemu's error answer is
// returned as an error naming the command.
func qmpDo(path, cmd string) error {
	c, err := net.DialTimeout("unix", path, qmpTimeout)
	if err != nil {
		return fmt.Errorf("qmp %s: %w", cmd, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(qmpTimeout))
	r := bufio.NewReaderSize(c, 4096)
	if _, err := qmpRead(r, false); err != nil { // the greeting
		return fmt.Errorf("qmp %s: greeting: %w", cmd, err)
	}
	for _, ex := range []string{"qmp_capabilities", cmd} {
		if _, err := fmt.Fprintf(c, "{\"execute\":%q}\n", ex); err != nil {
			return fmt.Errorf("qmp %s: %w", ex, err)
		}
		if _, err := qmpRead(r, true); err != nil {
			return fmt.Errorf("qmp %s: %w", ex, err)
		}
	}
	return nil
}

// qmpMsg is one message from qemu: a greeting, an event, an answer or an error.
type qmpMsg struct {
	QMP    json.RawMessage `json:"QMP"`
	Event  string          `json:"event"`
	Return json.RawMessage `json:"return"`
	Error  *struct {
		Class string `json:"class"`
		Desc  string `json:"desc"`
	} `json:"error"`
}

// qmpRead reads lines until the greeting (answer false) or an answer to a
// command (answer true), skipping events.
func qmpRead(r *bufio.Reader, answer bool) (qmpMsg, error) {
	for {
		line, err := readLine(r, qmpMaxLine)
		if err != nil {
			return qmpMsg{}, err
		}
		var m qmpMsg
		if err := json.Unmarshal(line, &m); err != nil {
			return qmpMsg{}, fmt.Errorf("bad message %.80q: %v", line, err)
		}
		switch {
		case m.Event != "":
			continue
		case m.Error != nil:
			return m, fmt.Errorf("qemu refused: %s: %s", m.Error.Class, m.Error.Desc)
		case !answer && m.QMP != nil, answer && m.Return != nil:
			return m, nil
		default:
			return m, fmt.Errorf("unexpected message %.80q", line)
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line of at most max bytes (without its newline).
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > max+1 {
			return nil, fmt.Errorf("%w: over %d bytes", errLineTooLong, max)
		}
		if err == nil {
			return line[:len(line)-1], nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}
