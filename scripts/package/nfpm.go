package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
)

const (
	summary     = "RDMA verbs latency percentiles and bandwidth (perftest-like)"
	description = summary + "\n" +
		"rdmabench measures latency percentiles and bandwidth of SEND, RDMA WRITE, RDMA READ\n" +
		"and atomics over real queue pairs (RC, UC, UD) through libibverbs, with a kernel-TCP\n" +
		"baseline, and writes a perftest-style table and a JSON document. It compares and\n" +
		"gates result files (rdmabench compare --baseline) and plots them. Links named\n" +
		"ib_send_lat, ib_write_bw, ... in /usr/lib/rdmabench/perftest make it act as perftest."
)

// writeNFPM writes the .deb or .rpm (format) into c.out and returns its path.
func writeNFPM(c *config, format string, es []entry, d deps) (string, error) {
	info := &nfpm.Info{
		Name:        "rdmabench",
		Arch:        c.arch,
		Platform:    "linux",
		Version:     c.version,
		Maintainer:  c.maint,
		Description: description,
		Homepage:    "https://github.com/rdmabench/rdmabench",
		License:     "Apache-2.0",
		Section:     "net",
		Priority:    "optional",
		MTime:       c.mtime,
	}
	info.RPM.Summary = summary
	info.RPM.Group = "Applications/System"
	info.RPM.Packager = c.maint
	info.RPM.BuildHost = "rdmabench" // not this machine's name: the same input, the same package
	switch format {
	case "deb":
		info.Depends = d.deb
		// libibverbs1 finds no device without a provider (rxe, mlx5, ...).
		info.Recommends = []string{"ibverbs-providers"}
		info.Suggests = []string{"rdma-core", "ibverbs-utils", "perftest"}
	case "rpm":
		info.Depends = d.rpm // Fedora's libibverbs carries the providers
		info.Suggests = []string{"rdma-core", "perftest"}
	}
	for _, e := range es {
		if e.only != "" && e.only != format {
			continue
		}
		ct := &files.Content{Destination: "/usr/" + e.dst}
		if e.link != "" {
			ct.Type, ct.Source = files.TypeSymlink, e.link
			ct.FileInfo = &files.ContentFileInfo{Mode: 0o777, MTime: c.mtime}
		} else {
			ct.Source = e.src
			ct.FileInfo = &files.ContentFileInfo{Mode: e.mode, MTime: c.mtime}
			if format == "rpm" && strings.HasPrefix(e.dst, "share/doc/") {
				ct.Type = files.TypeRPMDoc // rpm --excludedocs leaves them out
				if filepath.Base(e.dst) == "LICENSE" {
					ct.Type = files.TypeRPMLicense
				}
			}
		}
		info.Contents = append(info.Contents, ct)
	}
	info = nfpm.WithDefaults(info)
	if err := nfpm.Validate(info); err != nil {
		return "", fmt.Errorf("%s: %w", format, err)
	}
	p, err := nfpm.Get(format)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return "", err
	}
	name := filepath.Join(c.out, p.ConventionalFileName(info))
	f, err := os.Create(name)
	if err != nil {
		return "", err
	}
	info.Target = name
	if err := p.Package(info, f); err != nil {
		f.Close()
		os.Remove(name)
		return "", fmt.Errorf("%s: %w", format, err)
	}
	return name, f.Close()
}
