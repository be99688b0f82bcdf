package result

// Checks, before any test runs, that a run's output files can be written.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// CheckWritable checks that a document can be written to path (--json,
// --hgrm) before any test runs: an existing file is opened for writing
// without truncating it (nor blocking on a FIFO); a new one is created and
// removed again. "" and "-" (stdout) pass.
func CheckWritable(path string) error {
	if path == "" || path == "-" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			defer os.Remove(path)
		}
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// CheckPrefix checks that files named PREFIX-... can be created (--hgrm):
// one is created and removed again. "" passes.
func CheckPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(prefix), filepath.Base(prefix)+"-*.probe")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
