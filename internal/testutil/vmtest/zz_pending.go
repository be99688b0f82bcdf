package vmtest

// THROWAWAY (helper pair): Cmd's methods until helper vm's implementation is
// merged; the lead deletes this file at the merge. It speaks the agent's
// protocol as the design has it (internal/vm/proto: frames of a type byte, a
// 4-byte big-endian length and the payload; R run, O/E output, X exit, K
// signal) on the peer's port 7700.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"
)

type pendingRun struct {
	conn net.Conn
	wmu  sync.Mutex
	done chan struct{}
	code int
	err  error
}

func (r *pendingRun) frame(typ byte, payload []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	b := make([]byte, 5+len(payload))
	b[0] = typ
	binary.BigEndian.PutUint32(b[1:], uint32(len(payload)))
	copy(b[5:], payload)
	_, err := r.conn.Write(b)
	return err
}

func (r *pendingRun) Wait() (int, error) {
	<-r.done
	return r.code, r.err
}

func (r *pendingRun) Signal(sig int) error {
	select {
	case <-r.done:
		return errors.New("vmtest: the command has ended")
	default:
	}
	return r.frame('K', []byte{byte(sig)})
}

// Start starts the command on the peer.
func (c *Cmd) Start() error {
	if c.impl != nil {
		return errors.New("vmtest: Start: already started")
	}
	if c.ctx == nil {
		c.ctx = context.Background()
	}
	d := net.Dialer{Timeout: 10 * time.Second}
	conn, err := d.DialContext(c.ctx, "tcp", net.JoinHostPort(c.peer.Addr, "7700"))
	if err != nil {
		return fmt.Errorf("vmtest: %s's agent: %w", c.peer.Name, err)
	}
	r := &pendingRun{conn: conn, done: make(chan struct{}), code: -1}
	req, _ := json.Marshal(map[string]any{"argv": c.Args, "env": c.Env, "dir": c.Dir})
	if err := r.frame('R', req); err != nil {
		conn.Close()
		return err
	}
	c.impl = r
	stop := context.AfterFunc(c.ctx, func() {
		r.Signal(int(syscall.SIGKILL))
		time.AfterFunc(5*time.Second, func() { conn.Close() })
	})
	go func() {
		defer close(r.done)
		defer stop()
		defer conn.Close()
		var h [5]byte
		for {
			if _, err := io.ReadFull(conn, h[:]); err != nil {
				r.err = fmt.Errorf("vmtest: %s: the agent's connection: %w", c.peer.Name, err)
				return
			}
			p := make([]byte, binary.BigEndian.Uint32(h[1:]))
			if _, err := io.ReadFull(conn, p); err != nil {
				r.err = err
				return
			}
			switch h[0] {
			case 'O':
				if c.Stdout != nil {
					c.Stdout.Write(p)
				}
			case 'E':
				if c.Stderr != nil {
					c.Stderr.Write(p)
				}
			case 'X':
				var x struct {
					Code  int    `json:"code"`
					Error string `json:"error"`
				}
				if err := json.Unmarshal(p, &x); err != nil {
					r.err = err
					return
				}
				r.code = x.Code
				if x.Error != "" {
					r.err = errors.New(x.Error)
				} else if x.Code != 0 {
					r.err = errors.New("exit status " + strconv.Itoa(x.Code))
				}
				return
			}
		}
	}()
	return nil
}

// Wait waits for the command to end.
func (c *Cmd) Wait() error {
	if c.impl == nil {
		return errors.New("vmtest: Wait: not started")
	}
	_, err := c.impl.Wait()
	return err
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Output runs the command and returns its stdout.
func (c *Cmd) Output() ([]byte, error) {
	var b syncBuffer
	c.Stdout = &b
	err := c.Run()
	return b.bytes(), err
}

// Signal sends sig to the command's process group.
func (c *Cmd) Signal(sig syscall.Signal) error {
	if c.impl == nil {
		return errors.New("vmtest: Signal: not started")
	}
	return c.impl.Signal(int(sig))
}

// ExitCode is the exit status (128+n for signal n), -1 before the end.
func (c *Cmd) ExitCode() int {
	r, ok := c.impl.(*pendingRun)
	if !ok {
		return -1
	}
	select {
	case <-r.done:
		return r.code
	default:
		return -1
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuffer) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b...)
}
