// Package version says which rdmabench this is: the version, the commit and
// the build date, for --version and the result documents' tool_version.
//
// Packagers set them at link time, for example
//
//	go build -ldflags "-X github.com/rdmabench/rdmabench/internal/version.Version=1.2.0 \
//	    -X github.com/rdmabench/rdmabench/internal/version.Commit=3f2a9c1d7e0b \
//	    -X github.com/rdmabench/rdmabench/internal/version.Date=2026-12-01T07:00:00Z" ./cmd/rdmabench
//
// What is not set comes from the Go build info (runtime/debug.ReadBuildInfo):
// the module version of 'go install github.com/rdmabench/rdmabench/cmd/rdmabench@v1.2.0',
// and vcs.revision, vcs.time and vcs.modified of a build in a git checkout.
package version

import (
	"regexp"
	"runtime/debug"
	"strings"
)

// pseudo matches the end of a Go pseudo-version (v0.0.0-20261201071347-3967ea548b8f):
// the commit's UTC time and its 12-digit hash.
var pseudo = regexp.MustCompile(`[.-](\d{14})-([0-9a-f]{12})(\+incompatible)?$`)

// Link-time overrides (-ldflags -X); empty: from the build info.
var (
	Version string // e.g. 1.2.0 or v1.2.0
	Commit  string // full or short commit hash; a "-dirty" suffix marks a modified tree
	Date    string // build date, RFC 3339 (UTC)
)

// Base is the version of a build that has none from -ldflags or from
// its module (a build from a source tree: its build info says "(devel)").
const Base = "0.1.0"

// Info is one build's identity.
type Info struct {
	Version string // "0.1.0", or the module version ("v1.2.0", a pseudo-version)
	Commit  string // "" when unknown
	Date    string // "" when unknown
	Dirty   bool   // built from a tree with uncommitted changes
}

// Get returns this binary's identity: the -ldflags values over the
// build info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(bi, Version, Commit, Date)
}

// resolve combines the link-time values (v, c, d) with bi (may be nil).
func resolve(bi *debug.BuildInfo, v, c, d string) Info {
	in := Info{Version: v, Commit: c, Date: d}
	if strings.HasSuffix(in.Commit, "-dirty") {
		in.Commit, in.Dirty = strings.TrimSuffix(in.Commit, "-dirty"), true
	}
	if bi != nil {
		if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			in.Version = bi.Main.Version
			if m := pseudo.FindStringSubmatch(in.Version); m != nil && c == "" {
				// go install ...@<commit>: the pseudo-version names the commit and its time
				in.Commit = m[2]
				if in.Date == "" {
					in.Date = m[1][:4] + "-" + m[1][4:6] + "-" + m[1][6:8] + "T" + m[1][8:10] + ":" + m[1][10:12] + ":" + m[1][12:] + "Z"
				}
			}
		}
		if c == "" {
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					in.Commit = s.Value
				case "vcs.time":
					if in.Date == "" {
						in.Date = s.Value
					}
				case "vcs.modified":
					in.Dirty = s.Value == "true"
				}
			}
		}
	}
	if in.Version == "" {
		in.Version = Base
	}
	return in
}

// String is the one-line identity, as --version prints it and as
// tool_version records it, e.g.
// "0.1.0 (commit 3f2a9c1d7e0b, 2026-12-01T07:00:00Z)" or
// "v1.2.0 (commit 3f2a9c1d7e0b-dirty, date unknown)".
func (in Info) String() string {
	c := in.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if c == "" {
		c = "unknown"
	}
	if in.Dirty {
		c += "-dirty"
	}
	d := in.Date
	if d == "" {
		d = "date unknown"
	}
	return in.Version + " (commit " + c + ", " + d + ")"
}

// String is Get().String().
func String() string { return Get().String() }
