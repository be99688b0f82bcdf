// Package logbuf is a test helper: a log sink safe for concurrent writers
// (a server's goroutines) that a test can wait on.
package logbuf

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// Buf collects log output; safe for concurrent use.
type Buf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *Buf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Wait waits up to 3 s for s in the log; the test fails naming s otherwise.
func (l *Buf) Wait(t testing.TB, s string) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); !strings.Contains(l.String(), s); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the server log:\n%s", s, l)
		}
	}
}
