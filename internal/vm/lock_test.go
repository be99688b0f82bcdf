package vm

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "guest.lock")
	var msg bytes.Buffer
	rel, err := Lock(context.Background(), path, &msg)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("lock file holds %q, want this pid", b)
	}
	if msg.Len() != 0 {
		t.Fatalf("free lock printed %q", msg.String())
	}
	// a second taker (another open file description) waits, says so once, and
	// gets it once the first lets go
	done := make(chan error, 1)
	var msg2 bytes.Buffer
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r2, err := Lock(ctx, path, &msg2)
		if err == nil {
			r2()
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // let it find the lock busy (a few polls)
	rel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := "vmexec: another guest bed holds " + path + " (pid " + strconv.Itoa(os.Getpid()) + "): waiting\n"
	if msg2.String() != want {
		t.Fatalf("message %q, want %q (once)", msg2.String(), want)
	}
	// a deadline ends the wait with an error naming the lock
	rel, _ = Lock(context.Background(), path, &msg)
	defer rel()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = Lock(ctx, path, &msg2)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Lock past its deadline: %v", err)
	}
}

func TestLockMessage(t *testing.T) {
	if got := LockWaitMessage("/tmp/x.lock", 0); got != "vmexec: another guest bed holds /tmp/x.lock (pid unknown): waiting\n" {
		t.Fatal(got)
	}
}
