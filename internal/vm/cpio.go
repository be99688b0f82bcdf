package vm

import (
	"fmt"
	"io"
)

// cpioWriter writes a newc ("070701") cpio archive, the format the kernel
// unpacks into its initramfs. Only what an initramfs needs: directories,
// regular files, symlinks, device nodes; every entry owned by root, mtime 0 (the
// archive depends only on its contents).
type cpioWriter struct {
	w     io.Writer
	n     int64 // bytes written, for padding
	ino   uint32
	err   error
	ended bool
}

func newCpio(w io.Writer) *cpioWriter { return &cpioWriter{w: w, ino: 1} }

const (
	cpioDir  = 0o040000
	cpioFile = 0o100000
	cpioLink = 0o120000
	cpioChr  = 0o020000
)

func (c *cpioWriter) write(p []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
}

func (c *cpioWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

// entry writes one header, the name and data. mode includes the type bits.
func (c *cpioWriter) entry(name string, mode uint32, data []byte, rdevMajor, rdevMinor uint32) error {
	if c.ended {
		return fmt.Errorf("cpio: entry %q after the trailer", name)
	}
	nlink := uint32(1)
	if mode&0o170000 == cpioDir {
		nlink = 2
	}
	ino := c.ino
	c.ino++
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdevMajor, rdevMinor, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write(append([]byte(name), 0))
	c.pad()
	c.write(data)
	c.pad()
	return c.err
}

// Dir adds a directory.
func (c *cpioWriter) Dir(name string, perm uint32) error {
	return c.entry(name, cpioDir|perm&0o7777, nil, 0, 0)
}

// File adds a regular file.
func (c *cpioWriter) File(name string, perm uint32, data []byte) error {
	return c.entry(name, cpioFile|perm&0o7777, data, 0, 0)
}

// Symlink adds a symbolic link name -> target.
func (c *cpioWriter) Symlink(name, target string) error {
	return c.entry(name, cpioLink|0o777, []byte(target), 0, 0)
}

// CharDev adds a character device node.
func (c *cpioWriter) CharDev(name string, perm, major, minor uint32) error {
	return c.entry(name, cpioChr|perm&0o7777, nil, major, minor)
}

// Close writes the trailer (the archive ends on a 512-byte boundary, as cpio(1) does).
func (c *cpioWriter) Close() error {
	if c.ended {
		return c.err
	}
	c.entry("TRAILER!!!", 0, nil, 0, 0)
	c.ended = true
	if r := c.n % 512; r != 0 {
		c.write(make([]byte, 512-r))
	}
	return c.err
}
