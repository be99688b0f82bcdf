package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// entry is one file of a package. dst is relative to the install prefix:
// /usr in the .deb and .rpm, the top directory of the tarball.
type entry struct {
	src  string      // the file to copy (staged or in the repository); "" for a link
	dst  string      // e.g. "bin/rdmabench"
	link string      // a symlink's target, relative to the link's directory
	mode os.FileMode // permission bits of a file
	only string      // "deb", "rpm" or "tar.gz": this format only; "" for all
}

// PerftestDir holds the drop-in links, outside PATH so that they never
// shadow a real perftest: put it first on PATH to run perftest scripts
// against rdmabench.
const PerftestDir = "lib/rdmabench/perftest"

// HWCheckName is scripts/hw-check.sh's name in the packages' bin/.
const HWCheckName = "rdmabench-hw-check"

// perftestNames are the names under which rdmabench acts as perftest.
var perftestNames = []string{
	"ib_send_lat", "ib_write_lat", "ib_read_lat", "ib_atomic_lat",
	"ib_send_bw", "ib_write_bw", "ib_read_bw", "ib_atomic_bw",
}

// collect stages the generated files (completions, compressed man pages)
// under stage and returns every entry of the packages.
func collect(c *config, stage string) ([]entry, error) {
	es := []entry{{src: c.bin, dst: "bin/rdmabench", mode: 0o755},
		// the hardware check (docs/hardware.md): finds the rdmabench beside it
		{src: filepath.Join(c.root, "scripts", "hw-check.sh"), dst: "bin/" + HWCheckName, mode: 0o755}}
	for _, n := range perftestNames {
		es = append(es, entry{dst: PerftestDir + "/" + n, link: "../../../bin/rdmabench"})
	}
	comp, err := completions(c, stage)
	if err != nil {
		if !errors.Is(err, errMissing) || c.strict {
			return nil, err
		}
		warnf("%v: packaging without shell completions", err)
	}
	es = append(es, comp...)
	man, err := manPages(c, stage)
	if err != nil {
		if !errors.Is(err, errMissing) || c.strict {
			return nil, err
		}
		warnf("%v: packaging without man pages", err)
	}
	es = append(es, man...)
	doc := "share/doc/rdmabench/"
	es = append(es,
		entry{src: filepath.Join(c.root, "LICENSE"), dst: doc + "LICENSE", mode: 0o644},
		// Debian's policy: the license in /usr/share/doc/PACKAGE/copyright.
		entry{src: filepath.Join(c.root, "LICENSE"), dst: doc + "copyright", mode: 0o644, only: "deb"},
		entry{src: filepath.Join(c.root, "README.md"), dst: doc + "README.md", mode: 0o644})
	docs, err := filepath.Glob(filepath.Join(c.root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(docs)
	for _, d := range docs {
		es = append(es, entry{src: d, dst: doc + "docs/" + filepath.Base(d), mode: 0o644})
	}
	for _, e := range es {
		if e.src == "" {
			continue
		}
		if _, err := os.Stat(e.src); err != nil {
			return nil, fmt.Errorf("%s: %w", e.dst, err)
		}
	}
	return es, nil
}

// completions runs 'rdmabench completion SHELL' for bash, zsh and fish and
// stages the scripts where each shell looks for them.
func completions(c *config, stage string) ([]entry, error) {
	var es []entry
	for _, sh := range []string{"bash", "zsh", "fish"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, c.bin, "completion", sh)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		if err != nil || len(out) == 0 {
			msg := strings.TrimSpace(stderr.String())
			if i := strings.IndexByte(msg, '\n'); i >= 0 {
				msg = msg[:i]
			}
			return nil, fmt.Errorf("'%s completion %s' gave no script (%v: %s): completions %w",
				filepath.Base(c.bin), sh, err, msg, errMissing)
		}
		f := filepath.Join(stage, "completion."+sh)
		if err := os.WriteFile(f, out, 0o644); err != nil {
			return nil, err
		}
		switch sh {
		case "bash":
			es = append(es, entry{src: f, dst: "share/bash-completion/completions/rdmabench", mode: 0o644})
		case "zsh":
			// Debian's zsh reads vendor-completions; Fedora's and a
			// /usr/local install read site-functions.
			es = append(es, entry{src: f, dst: "share/zsh/vendor-completions/_rdmabench", mode: 0o644, only: "deb"},
				entry{src: f, dst: "share/zsh/site-functions/_rdmabench", mode: 0o644, only: "rpm"},
				entry{src: f, dst: "share/zsh/site-functions/_rdmabench", mode: 0o644, only: "tar.gz"})
		case "fish":
			es = append(es, entry{src: f, dst: "share/fish/vendor_completions.d/rdmabench.fish", mode: 0o644})
		}
	}
	return es, nil
}

// manPages gzips each NAME.N in c.man (make man) into stage, for
// share/man/manN/NAME.N.gz.
func manPages(c *config, stage string) ([]entry, error) {
	pages, err := filepath.Glob(filepath.Join(c.man, "*.[1-9]"))
	if err != nil {
		return nil, err
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("no man pages (*.1 ... *.9) in %s (make man writes them): man pages %w", c.man, errMissing)
	}
	sort.Strings(pages)
	if err := os.MkdirAll(filepath.Join(stage, "man"), 0o755); err != nil {
		return nil, err
	}
	var es []entry
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression) // no name, no time: reproducible
		w.Write(b)
		if err := w.Close(); err != nil {
			return nil, err
		}
		name := filepath.Base(p)
		f := filepath.Join(stage, "man", name+".gz")
		if err := os.WriteFile(f, z.Bytes(), 0o644); err != nil {
			return nil, err
		}
		es = append(es, entry{src: f, dst: "share/man/man" + name[len(name)-1:] + "/" + name + ".gz", mode: 0o644})
	}
	return es, nil
}
