package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "3f2a9c1d7e0b5a6c7d8e9f000102030405060708"},
		{Key: "vcs.time", Value: "2026-12-01T07:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	installed := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}
	for _, c := range []struct {
		name    string
		bi      *debug.BuildInfo
		v, c, d string
		want    string
	}{
		{"no build info", nil, "", "", "", Base + " (commit unknown, date unknown)"},
		{"git checkout", vcs, "", "", "", Base + " (commit 3f2a9c1d7e0b-dirty, 2026-12-01T07:00:00Z)"},
		{"go install @v1.2.0", installed, "", "", "", "v1.2.0 (commit unknown, date unknown)"},
		{"go install @commit", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201071347-3967ea548b8f"}}, "", "", "",
			"v0.0.0-20261201071347-3967ea548b8f (commit 3967ea548b8f, 2026-12-01T07:13:47Z)"},
		{"go install @commit after a tag", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.1-0.20261201071347-3967ea548b8f"}}, "", "", "",
			"v1.2.1-0.20261201071347-3967ea548b8f (commit 3967ea548b8f, 2026-12-01T07:13:47Z)"},
		{"ldflags win", vcs, "1.3.0", "abcdef0-dirty", "2026-12-02T00:00:00Z", "1.3.0 (commit abcdef0-dirty, 2026-12-02T00:00:00Z)"},
		{"ldflags commit only", vcs, "", "abcdef0", "", Base + " (commit abcdef0, date unknown)"},
	} {
		if got := resolve(c.bi, c.v, c.c, c.d).String(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
