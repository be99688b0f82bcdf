package vmtest

// Throwaway (helper exp2's worktree only; the lead deletes it at merge): the
// Cmd methods helper vm implements, so that the experiments compile.

import (
	"errors"
	"syscall"
)

var errPending = errors.New("vmtest: Cmd not implemented yet")

func (c *Cmd) Start() error                    { return errPending }
func (c *Cmd) Wait() error                     { return errPending }
func (c *Cmd) Run() error                      { return errPending }
func (c *Cmd) Output() ([]byte, error)         { return nil, errPending }
func (c *Cmd) Signal(sig syscall.Signal) error { return errPending }
func (c *Cmd) ExitCode() int                   { return -1 }
