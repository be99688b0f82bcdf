package vm

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultLockPath is the one lock every guest bed on a host takes
// (RDMABENCH_VM_LOCK overrides it): one bed at a time.
const DefaultLockPath = "/tmp/rdmabench-guest.lock"

// LockPath is the lock file in use.
func LockPath() string {
	if p := os.Getenv("RDMABENCH_VM_LOCK"); p != "" {
		return p
	}
	return DefaultLockPath
}

// LockWaitMessage is the line a waiting bed prints (once).
func LockWaitMessage(path string, holder int) string {
	who := "pid unknown"
	if holder > 0 {
		who = "pid " + strconv.Itoa(holder)
	}
	return fmt.Sprintf("vmexec: another guest bed holds %s (%s): waiting\n", path, who)
}

// Lock takes the bed lock at path (flock, exclusive) and writes this
// process's pid into the file. Where another process holds it, Lock says so
// once on msg and waits until it is free or ctx ends. The lock lasts until
// release is called or the process exits.
func Lock(ctx context.Context, path string, msg io.Writer) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("%w: bed lock %s: %v", ErrPrereq, path, err)
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err != nil && err != unix.EWOULDBLOCK {
		f.Close()
		return nil, fmt.Errorf("bed lock %s: %v", path, err)
	}
	if err == unix.EWOULDBLOCK {
		b, _ := os.ReadFile(path)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		io.WriteString(msg, LockWaitMessage(path, pid))
		// A blocking flock, not a polling one: the kernel wakes blocked waiters
		// when the holder lets go, and a poller would lose every such race.
		got := make(chan error, 1)
		go func() { got <- unix.Flock(int(f.Fd()), unix.LOCK_EX) }()
		select {
		case err := <-got:
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("bed lock %s: %v", path, err)
			}
		case <-ctx.Done():
			go func() { // the flock may still succeed: let go of it then
				if <-got == nil {
					unix.Flock(int(f.Fd()), unix.LOCK_UN)
				}
				f.Close()
			}()
			return nil, fmt.Errorf("waiting for the bed lock %s: %w", path, ctx.Err())
		}
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		f.Truncate(0)
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
