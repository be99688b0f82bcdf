package vmtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"syscall"

	"github.com/rdmabench/rdmabench/internal/vm/proto"
)

// ExitError is the error of a command that ran and exited non-zero (or was
// killed by a signal: Code 128+n), like os/exec's.
type ExitError struct {
	Peer string
	Code int
	Msg  string // the agent's note (command not found, timed out), if any
}

func (e *ExitError) Error() string {
	s := fmt.Sprintf("%s: exit status %d", e.Peer, e.Code)
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

// ExitCode returns the exit status.
func (e *ExitError) ExitCode() int { return e.Code }

// agentCmd is the transport: one TCP connection to the peer's agent.
type agentCmd struct {
	conn net.Conn
	cl   *proto.Client
	done chan struct{}
	exit proto.Exit
	err  error
}

func (a *agentCmd) Wait() (int, error) {
	<-a.done
	if a.err != nil {
		return -1, a.err
	}
	return a.exit.Code, nil
}

func (a *agentCmd) Signal(sig int) error { return a.cl.Signal(sig) }

// Start starts the command on the peer (the agent on Addr, port proto.Port).
func (c *Cmd) Start() error {
	if c.impl != nil {
		return errors.New("vmtest: Cmd already started")
	}
	if c.ctx == nil {
		c.ctx = context.Background()
	}
	var d net.Dialer
	conn, err := d.DialContext(c.ctx, "tcp", net.JoinHostPort(c.peer.Addr, strconv.Itoa(proto.Port)))
	if err != nil {
		return fmt.Errorf("vmtest: %s's agent: %w", c.peer.Name, err)
	}
	a := &agentCmd{conn: conn, done: make(chan struct{})}
	a.cl = &proto.Client{R: conn, W: proto.NewWriter(conn), Stdout: c.Stdout, Stderr: c.Stderr}
	if err := a.cl.Start(proto.Run{Argv: c.Args, Env: c.Env, Dir: c.Dir}); err != nil {
		conn.Close()
		return fmt.Errorf("vmtest: %s: send the request: %w", c.peer.Name, err)
	}
	c.impl = a
	stop := context.AfterFunc(c.ctx, func() { conn.Close() }) // the agent kills the command
	go func() {
		a.exit, a.err = a.cl.Wait()
		if a.err != nil && c.ctx.Err() != nil {
			a.err = fmt.Errorf("%s: %w", c.peer.Name, c.ctx.Err())
		}
		stop()
		conn.Close()
		close(a.done)
	}()
	return nil
}

// Wait waits for the command to end. A non-zero exit is an *ExitError.
func (c *Cmd) Wait() error {
	if c.impl == nil {
		return errors.New("vmtest: Cmd not started")
	}
	c.waitOnce.Do(func() {
		code, err := c.impl.Wait()
		c.code = code
		if err != nil {
			c.waitErr = err
			c.code = -1
			return
		}
		if code != 0 {
			msg := ""
			if a, ok := c.impl.(*agentCmd); ok {
				msg = a.exit.Error
			}
			c.waitErr = &ExitError{Peer: c.peer.Name, Code: code, Msg: msg}
		}
	})
	return c.waitErr
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
	if c.Stdout != nil {
		return nil, errors.New("vmtest: Stdout already set")
	}
	var b syncBuffer
	c.Stdout = &b
	err := c.Run()
	return b.Bytes(), err
}

// Signal sends sig to the command's process group on the peer.
func (c *Cmd) Signal(sig syscall.Signal) error {
	if c.impl == nil {
		return errors.New("vmtest: Cmd not started")
	}
	return c.impl.Signal(int(sig))
}

// ExitCode is the exit status once Wait returned (128+n for signal n), -1
// before or when the command's status was lost.
func (c *Cmd) ExitCode() int {
	if c.impl == nil {
		return -1
	}
	select {
	case <-c.doneCh():
	default:
		return -1
	}
	c.Wait()
	return c.code
}

func (c *Cmd) doneCh() chan struct{} {
	if a, ok := c.impl.(*agentCmd); ok {
		return a.done
	}
	ch := make(chan struct{})
	close(ch)
	return ch
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

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b
}
