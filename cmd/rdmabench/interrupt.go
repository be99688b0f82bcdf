package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// How a client run ends early: a signal (SIGINT, SIGTERM) or --run-timeout.
// Either aborts the running test; the finished results are printed and
// written to --json with "partial": true.

// signalError is a run ended by a signal. The CLI exits 128+N: 130 for
// SIGINT, 143 for SIGTERM.
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string {
	name := "SIGINT"
	if e.sig == syscall.SIGTERM {
		name = "SIGTERM"
	}
	return "interrupted by " + name
}

// Unwrap makes errors.Is(err, context.Canceled) hold, as for any cancelled run.
func (e *signalError) Unwrap() error { return context.Canceled }

// runTimeoutError is a client run stopped by --run-timeout (exit exitTimeout).
type runTimeoutError struct{ limit time.Duration }

func (e *runTimeoutError) Error() string {
	return fmt.Sprintf("--run-timeout %v expired: the running test was aborted", e.limit)
}

// Unwrap makes errors.Is(err, context.DeadlineExceeded) hold.
func (e *runTimeoutError) Unwrap() error { return context.DeadlineExceeded }

// signalContext is cancelled by the first SIGINT or SIGTERM, with a
// *signalError as its cause; a second signal then has its default effect
// (a user who presses Ctrl-C twice means it). stop releases the signals.
func signalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(&signalError{sig: s.(syscall.Signal)})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// withRunTimeout bounds ctx by d (0: no bound) with a *runTimeoutError cause.
func withRunTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, &runTimeoutError{limit: d})
}

// endedEarly is why ctx ended (a *signalError or *runTimeoutError) in place
// of err, the error of a run it cut short; err otherwise.
func endedEarly(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	if c := context.Cause(ctx); c != nil {
		return c
	}
	return err
}
