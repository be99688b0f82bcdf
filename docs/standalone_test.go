package docs

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsidePaths matches a path that points outside the repository: the development
// machines' shared test-bed notes and reference notes, a sibling checkout's shared
// folder, and the development host's own tree (checkouts, worktrees, helper notes,
// the search library). What those notes hold belongs in docs/testbed.md and the other
// docs, in the project's own words. /work as the old shell bed's guest directory
// (/work/guest-test.sh, /work/libdrvshim.so) is inside the guest, not outside the
// repository, and stays allowed.
//
// The patterns are built from pieces so that this file does not name the paths
// itself (a plain text search of the tree finds none).
var outsidePaths = regexp.MustCompile(strings.Join([]string{
	`shared/` + `softroce-vm\.md`,
	`shared/` + `reference/`,
	`\.\./` + `shared\b`,
	`/work/` + `(shared|main|wt|helpers|\.library)\b`,
}, "|"))

// repoFiles lists the repository's files (relative, slash-separated): git's tracked
// and untracked-but-not-ignored files in a checkout, else (an unpacked tarball) every
// file outside .git, build and .cache.
func repoFiles(t *testing.T) []string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(repoRoot, ".git")); err == nil {
		cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
		cmd.Dir = repoRoot
		out, err := cmd.Output()
		if err == nil {
			var files []string
			for _, f := range bytes.Split(out, []byte{0}) {
				if len(f) > 0 {
					files = append(files, string(f))
				}
			}
			return files
		}
		t.Logf("git ls-files: %v; walking the tree instead", err)
	}
	var files []string
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		if d.IsDir() && (rel == ".git" || rel == "build" || rel == ".cache") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRepositoryStandsAlone fails when any file of the repository (docs, scripts, code,
// test data) sends a reader to a path outside it: a user of the repository cannot
// follow such a reference. The test-bed recipes are in docs/testbed.md.
func TestRepositoryStandsAlone(t *testing.T) {
	files := repoFiles(t)
	if len(files) < 50 {
		t.Fatalf("only %d files found in %s: not the repository?", len(files), repoRoot)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet in the index
			}
			t.Fatal(err)
		}
		for i, line := range bytes.Split(b, []byte("\n")) {
			if m := outsidePaths.Find(line); m != nil {
				t.Errorf("%s:%d names %q, outside the repository (write what it holds into the docs, e.g. docs/testbed.md): %s",
					f, i+1, m, bytes.TrimSpace(line))
			}
		}
	}
}

// TestOutsidePaths pins what counts as outside the repository.
func TestOutsidePaths(t *testing.T) {
	for _, c := range []struct {
		line    string
		outside bool
	}{
		{"See /work/" + "shared/" + "softroce-vm.md for the recipe.", true},
		{"per `/work/" + "shared/" + "reference/perftest.md`", true},
		{"cat ../" + "shared/notes.md", true},
		{`"/work/` + `wt-mesh/build/rdmabench",`, true},
		{"cd /work/" + "main && make", true},
		{"/work/" + "helpers/COMMON.md", true},
		{"/work/" + ".library/search/README.md", true},
		{"-- sh /work/guest-test.sh", false},
		{"LD_PRELOAD=/work/libdrvshim.so rdmabench", false},
		{"boots the guest and runs CMD in `/work`", false},
		{"default DEST /work/BASENAME", false},
		{"docs/testbed.md describes the recipe", false},
		{"bench/sharedmem.go, shared receive queue", false},
	} {
		if got := outsidePaths.MatchString(c.line); got != c.outside {
			t.Errorf("%q: outside = %v, want %v", c.line, got, c.outside)
		}
	}
}
