package main

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeTarball writes rdmabench-VERSION-linux-ARCH.tar.gz: one top
// directory laid out like /usr (bin/, lib/rdmabench/perftest/, share/),
// so that 'tar -C /usr/local --strip-components=1 -xzf FILE' installs it.
// Entries are in the order of es, with fixed owners and times.
func writeTarball(c *config, es []entry) (string, error) {
	top := fmt.Sprintf("rdmabench-%s-linux-%s", c.version, c.arch)
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return "", err
	}
	name := filepath.Join(c.out, top+".tar.gz")
	f, err := os.Create(name)
	if err != nil {
		return "", err
	}
	if err := fillTarball(f, c, top, es); err != nil {
		f.Close()
		os.Remove(name)
		return "", fmt.Errorf("tar.gz: %w", err)
	}
	return name, f.Close()
}

func fillTarball(w io.Writer, c *config, top string, es []entry) error {
	z, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	t := tar.NewWriter(z)
	dirs := map[string]bool{}
	hdr := func(name string) *tar.Header {
		return &tar.Header{Name: name, ModTime: c.mtime, Uname: "root", Gname: "root", Format: tar.FormatPAX}
	}
	var mkdir func(string) error
	mkdir = func(d string) error {
		if d == "." || dirs[d] {
			return nil
		}
		if err := mkdir(filepath.Dir(d)); err != nil {
			return err
		}
		dirs[d] = true
		h := hdr(top + "/" + d + "/")
		h.Typeflag, h.Mode = tar.TypeDir, 0o755
		return t.WriteHeader(h)
	}
	h := hdr(top + "/")
	h.Typeflag, h.Mode = tar.TypeDir, 0o755
	if err := t.WriteHeader(h); err != nil {
		return err
	}
	for _, e := range es {
		if e.only != "" && e.only != "tar.gz" {
			continue
		}
		if err := mkdir(filepath.Dir(e.dst)); err != nil {
			return err
		}
		h := hdr(top + "/" + e.dst)
		if e.link != "" {
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.link, 0o777
			if err := t.WriteHeader(h); err != nil {
				return err
			}
			continue
		}
		b, err := os.ReadFile(e.src)
		if err != nil {
			return err
		}
		h.Typeflag, h.Mode, h.Size = tar.TypeReg, int64(e.mode), int64(len(b))
		if err := t.WriteHeader(h); err != nil {
			return err
		}
		if _, err := t.Write(b); err != nil {
			return err
		}
	}
	if err := t.Close(); err != nil {
		return err
	}
	return z.Close()
}
