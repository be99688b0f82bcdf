package vm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCpioFormat(t *testing.T) {
	var buf bytes.Buffer
	c := newCpio(&buf)
	c.Dir("etc", 0o755)
	c.File("etc/hello", 0o644, []byte("hello\n"))
	c.Symlink("hi", "etc/hello")
	c.CharDev("console", 0o600, 5, 1)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if len(b)%512 != 0 {
		t.Fatalf("archive is %d bytes, not a multiple of 512", len(b))
	}
	if !bytes.HasPrefix(b, []byte("070701")) {
		t.Fatalf("no newc magic: %q", b[:6])
	}
	// header 110 bytes + "etc\0" (4) = 114 -> padded to 116
	if got := string(b[116:122]); got != "070701" {
		t.Fatalf("second header not 4-aligned at 116: %q", got)
	}
	if !bytes.Contains(b, []byte("TRAILER!!!\x00")) {
		t.Fatal("no trailer")
	}
	if err := c.File("late", 0o644, nil); err == nil {
		t.Fatal("entry after Close: no error")
	}
	// cpio(1), where installed, reads it back.
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("no cpio(1) to cross-check with")
	}
	dir := t.TempDir()
	cmd := exec.Command("cpio", "-i", "--quiet", "-d", "--no-absolute-filenames")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(b)
	var list bytes.Buffer
	lc := exec.Command("cpio", "-t", "--quiet")
	lc.Stdin = bytes.NewReader(b)
	lc.Stdout = &list
	if err := lc.Run(); err != nil {
		t.Fatalf("cpio -t: %v", err)
	}
	if got := strings.Fields(list.String()); strings.Join(got, " ") != "etc etc/hello hi console" {
		t.Fatalf("cpio -t lists %q", got)
	}
	cmd = exec.Command("cpio", "-i", "--quiet", "-d", "--no-absolute-filenames", "etc/hello", "hi")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(b)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v: %s", err, out)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "hi")); string(got) != "hello\n" {
		t.Fatalf("hi -> etc/hello reads %q", got)
	}
}
