package faults

import (
	"fmt"
	"strings"
	"time"
)

// Checks shared by the cases.

// ExpectExit runs a client with args and wants exit code want within limit,
// and every string of mention in its output (the clear error).
func (t *Fx) ExpectExit(want int, limit time.Duration, mention []string, args ...string) error {
	code, out, took := t.Run(limit+5*time.Second, args...)
	if code == -1 {
		return fmt.Errorf("still running after %v (wanted exit %d); output:\n%s", limit+5*time.Second, want, indent(out))
	}
	if code != want {
		return fmt.Errorf("exit %d, want %d; output:\n%s", code, want, indent(out))
	}
	if took > limit {
		return fmt.Errorf("exit %d after %v, want within %v", code, took.Round(time.Millisecond), limit)
	}
	for _, m := range mention {
		if !strings.Contains(out, m) {
			return fmt.Errorf("exit %d but the output lacks %q:\n%s", code, m, indent(out))
		}
	}
	return nil
}

// Serves checks that the server on this case's port still serves a normal
// client: one short SEND latency test on loopback, within 60 s.
func (t *Fx) Serves(extra ...string) error {
	args := append([]string{"run", "127.0.0.1", "-p", fmt.Sprint(t.port), "--op", "send", "--mode", "lat", "--size", "8", "--iters", "200"}, extra...)
	code, out, _ := t.Run(60*time.Second, args...)
	if code != 0 {
		return fmt.Errorf("the server no longer serves a normal client: exit %d:\n%s", code, indent(out))
	}
	return nil
}
