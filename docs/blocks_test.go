package docs

// The fenced code blocks of the Markdown files, their kinds, and what the checks need:
// the rdmabench commands in a shell block, output matching, the guest script.

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// Block is one fenced code block of a Markdown file.
type Block struct {
	File  string   // path from the repository root
	Line  int      // 1-based line of the opening fence
	Lang  string   // first word of the info string: sh, text, go, ...
	Attrs []string // the other words: rdma, norun, output, run, exit=N
	Body  string   // the lines between the fences, the fence's indentation removed
}

// Pos names the block for messages: FILE:LINE.
func (b Block) Pos() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

func (b Block) has(attr string) bool {
	for _, a := range b.Attrs {
		if a == attr {
			return true
		}
	}
	return false
}

// Exit is the exit code the block must end with: its exit=N attribute, else 0.
func (b Block) Exit() int {
	for _, a := range b.Attrs {
		if v, ok := strings.CutPrefix(a, "exit="); ok {
			n, err := strconv.Atoi(v)
			if err == nil {
				return n
			}
		}
	}
	return 0
}

var fenceRE = regexp.MustCompile("^([ \t]*)(```+|~~~+)[ \t]*(.*)$")

// Parse returns the fenced code blocks of a Markdown text. An unclosed fence is an error.
func Parse(file, text string) ([]Block, error) {
	lines := strings.Split(text, "\n")
	var out []Block
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, fence, info := m[1], m[2], strings.Fields(m[3])
		b := Block{File: file, Line: i + 1}
		if len(info) > 0 {
			b.Lang, b.Attrs = info[0], info[1:]
		}
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			l := lines[i]
			if c := fenceRE.FindStringSubmatch(l); c != nil && strings.TrimSpace(c[3]) == "" &&
				c[2][0] == fence[0] && len(c[2]) >= len(fence) {
				closed = true
				break
			}
			body = append(body, strings.TrimPrefix(l, indent))
		}
		if !closed {
			return nil, fmt.Errorf("%s: unclosed code fence", b.Pos())
		}
		b.Body = strings.Join(body, "\n") + "\n"
		out = append(out, b)
	}
	return out, nil
}

// Kind is what the test does with a block.
type Kind int

const (
	KindHost   Kind = iota + 1 // ```sh: run on the host, rdmabench on PATH, in a directory with fixtures
	KindGuest                  // ```sh rdma: needs an RDMA device: run in the SoftRoCE guest (fewer iterations, see ForGuest; ```sh rdma full: as written)
	KindGo                     // ```go run: a Go program of this module, built and run on the host
	KindOutput                 // ```text output: lines the block above prints (numbers aside for rdma blocks)
	KindNoRun                  // ```LANG norun: cannot run here (a package manager, a cluster, make test itself): shell blocks get bash -n and a flag check
)

// Classify returns the block's kind from its info string, or an error for a block that no
// check would cover: every block must say what it is.
func Classify(b Block) (Kind, error) {
	attrs := map[string]bool{}
	for _, a := range b.Attrs {
		if strings.HasPrefix(a, "exit=") {
			if _, err := strconv.Atoi(a[5:]); err != nil {
				return 0, fmt.Errorf("%s: bad %q", b.Pos(), a)
			}
			continue
		}
		attrs[a] = true
	}
	bad := func() (Kind, error) {
		return 0, fmt.Errorf("%s: unclassified code block ```%s %s: use ```sh (runs on the host), "+
			"```sh rdma (runs in the SoftRoCE guest), ```go run, ```text output (the output of the "+
			"block above), or ```LANG norun (cannot run here; shell blocks are still parsed and their flags checked)",
			b.Pos(), b.Lang, strings.Join(b.Attrs, " "))
	}
	switch {
	case attrs["norun"] && len(attrs) == 1 && b.Lang != "":
		return KindNoRun, nil
	case (b.Lang == "sh" || b.Lang == "bash") && len(attrs) == 0:
		return KindHost, nil
	case (b.Lang == "sh" || b.Lang == "bash") && attrs["rdma"] && (len(attrs) == 1 || len(attrs) == 2 && attrs["full"]):
		return KindGuest, nil
	case b.Lang == "go" && attrs["run"] && len(attrs) == 1:
		return KindGo, nil
	case b.Lang == "text" && attrs["output"] && len(attrs) == 1:
		return KindOutput, nil
	}
	return bad()
}

// StripComments removes shell comments (a # at the start of a word, outside quotes) and
// joins backslash-continued lines.
func StripComments(body string) string {
	body = strings.ReplaceAll(body, "\\\n", " ")
	var out []string
	for _, l := range strings.Split(body, "\n") {
		var sq, dq bool
		for i, r := range l {
			switch {
			case r == '\'' && !dq:
				sq = !sq
			case r == '"' && !sq:
				dq = !dq
			case r == '#' && !sq && !dq && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
				l = l[:i]
			}
			if len(l) <= i {
				break
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// Command is one rdmabench invocation in a shell block.
type Command struct {
	Sub   string   // the subcommand: run, loopback, compare, ...
	Flags []string // the flags given: --op, -n, ...
}

var (
	splitRE = regexp.MustCompile(`&&|\|\||[;|&\n]`)
	shortRE = regexp.MustCompile(`^-[A-Za-z]$`)
	subRE   = regexp.MustCompile(`^[a-z][a-z-]*$`)
	longRE  = regexp.MustCompile(`^--[a-z0-9][a-z0-9_-]*`)
)

// Commands returns the rdmabench invocations of a shell block (also behind mpiexec, srun
// or a path: build/rdmabench), with their flags. Synopsis brackets ([--json FILE]) are
// read as flags too.
func Commands(body string) []Command {
	var out []Command
	for _, seg := range splitRE.Split(StripComments(body), -1) {
		f := strings.Fields(seg)
		for i, w := range f {
			if path.Base(w) != "rdmabench" || i+1 >= len(f) || !subRE.MatchString(f[i+1]) {
				continue
			}
			c := Command{Sub: f[i+1]}
			for _, a := range f[i+2:] {
				a = strings.Trim(a, "[]")
				if a == ">" || strings.HasPrefix(a, ">") {
					break
				}
				if m := longRE.FindString(a); m != "" {
					c.Flags = append(c.Flags, m)
				} else if shortRE.MatchString(a) {
					c.Flags = append(c.Flags, a)
				}
			}
			out = append(out, c)
			break
		}
	}
	return out
}

// HelpHasFlag reports whether a --help text lists the flag (-x as "-x," or "-x ").
func HelpHasFlag(help, flag string) bool {
	if strings.HasPrefix(flag, "--") {
		return regexp.MustCompile(regexp.QuoteMeta(flag) + `($|[^a-z0-9_-])`).MatchString(help)
	}
	return regexp.MustCompile(`(^|[\s\[])` + regexp.QuoteMeta(flag) + `[,\s]`).MatchString(help)
}

var (
	numRE   = regexp.MustCompile(`n/a|[0-9]+(\.[0-9]+)?`)
	spaceRE = regexp.MustCompile(`\s+`)
)

// Mask makes an output line comparable across runs: every number and n/a becomes #, and
// runs of white space one space. The guest script's sed does the same.
func Mask(l string) string {
	return strings.TrimSpace(spaceRE.ReplaceAllString(numRE.ReplaceAllString(l, "#"), " "))
}

// MissingLines returns the lines of a sample that the output lacks. A line "..." stands
// for lines left out; a line ending in "..." matches any line it starts. Trailing space
// is ignored; with masked, numbers are too (Mask).
func MissingLines(sample, output string, masked bool) []string {
	norm := func(l string) string {
		if masked {
			return Mask(l)
		}
		return strings.TrimRight(l, " \t")
	}
	have := map[string]bool{}
	var outLines []string
	for _, l := range strings.Split(output, "\n") {
		have[norm(l)] = true
		outLines = append(outLines, norm(l))
	}
	var miss []string
	for _, l := range strings.Split(sample, "\n") {
		n := norm(l)
		if n == "" || strings.TrimSpace(l) == "..." {
			continue
		}
		if p, ok := strings.CutSuffix(n, "..."); ok {
			found := false
			for _, o := range outLines {
				if strings.HasPrefix(o, strings.TrimSpace(p)) {
					found = true
					break
				}
			}
			if !found {
				miss = append(miss, l)
			}
			continue
		}
		if !have[n] {
			miss = append(miss, l)
		}
	}
	return miss
}

// guestIters is the iteration count the guest runs latency and bandwidth commands with,
// so the whole stage stays short under TCG.
const guestIters = 200

var itersRE = regexp.MustCompile(`(^|\s)(--iters|-n)([ =])([0-9]+)`)

// ForGuest rewrites a block's body for the guest: iteration counts above guestIters come
// down to it, and `rdmabench loopback|run` without a count or duration gets -n guestIters.
func ForGuest(body string) string {
	body = itersRE.ReplaceAllStringFunc(body, func(m string) string {
		s := itersRE.FindStringSubmatch(m)
		if n, _ := strconv.Atoi(s[4]); n > guestIters {
			return s[1] + s[2] + s[3] + strconv.Itoa(guestIters)
		}
		return m
	})
	var out []string
	for _, l := range strings.Split(body, "\n") {
		code := StripComments(l)
		if regexp.MustCompile(`rdmabench (loopback|run)\b`).MatchString(code) &&
			!regexp.MustCompile(`(^|\s)(--iters|-n|-D|--duration)[ =]`).MatchString(code) {
			l = regexp.MustCompile(`rdmabench (loopback|run)\b`).ReplaceAllString(l, "rdmabench $1 -n "+strconv.Itoa(guestIters))
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// GuestScript returns an sh script (busybox sh in the guest) that runs every ```sh rdma
// block in its own directory under /tmp/docs, fails on a non-zero exit (or another
// exit=N; a failing block runs once more, and fails the stage if it fails again), and
// checks the ```text output block after it, numbers masked (Mask). A block
// with the same commands as one before it is not run again: its sample is checked against
// that output. It returns the number of ```sh rdma blocks.
func GuestScript(blocks []Block) (string, int, error) {
	var s strings.Builder
	s.WriteString(`#!/bin/sh
# Generated by docs/docs_test.go (go test ./docs -run '^TestGuestScript$' -args -guest-script FILE);
# run in the SoftRoCE guest by scripts/guest-test.sh. The README's and docs/' blocks that need RDMA.
set -u
fail() { echo "DOCS FAIL: $*"; exit 1; }
mask() { sed -E 's/n\/a|[0-9]+(\.[0-9]+)?/#/g; s/[[:space:]]+/ /g; s/^ //; s/ $//'; }
# run WANT: block.sh must exit WANT. A block that fails is run once more, loudly: under
# a loaded host a loopback can lose its peer's heartbeat (4 s) or progress (10 s), which
# the other stages test; this one is about the blocks being right. Each try runs in its own
# process group, killed when the try ends: a server a block started in the background and
# left behind (it failed before its kill, or a perftest server still finishing) must not
# hold the control port against the next try or block.
run() {
	for try in 1 2; do
		t0=$(date +%s); setsid sh -e block.sh >out.txt 2>&1 & p=$!; wait $p; rc=$?
		if kill -KILL -$p 2>/dev/null; then # then until they are gone (zombies at most), 2 s at most
			echo "    killed what the block left running"; k=0
			while [ $k -lt 20 ] && ps -o pid=,pgid=,stat= 2>/dev/null | awk -v g=$p '$2 == g && $3 !~ /^Z/ { f = 1 } END { exit !f }'; do sleep 0.1; k=$((k + 1)); done
		fi
		echo "    exit $rc in $(($(date +%s) - t0)) s"
		[ "$rc" = "$1" ] && return 0
		echo "    DOCS RETRY: exit $rc, want $1; its output's last lines:"; tail -5 out.txt | sed 's/^/      /'
	done
	cat out.txt
	return 1
}
check() { # check POS: every line of want.txt (masked) is a line of out.txt (masked)
	mask <out.txt >out.m; mask <want.txt >want.m
	while IFS= read -r l; do
		case "$l" in
		''|...) ;;
		*...) grep -Fq -- "${l%...}" out.m || { cat out.txt; fail "$1: no line starts with: $l"; } ;;
		*) grep -Fxq -- "$l" out.m || { cat out.txt; fail "$1: not in the output (numbers masked): $l"; } ;;
		esac
	done <want.m
}
`)
	type ranBlock struct {
		dir int
		pos string
	}
	ran := map[string]ranBlock{} // exit code and body → where it ran
	n := 0
	for i, b := range blocks {
		k, err := Classify(b)
		if err != nil {
			return "", 0, err
		}
		if k != KindGuest {
			continue
		}
		n++
		body := b.Body
		if !b.has("full") {
			body = ForGuest(body)
		}
		if strings.Contains(body, "DOCS_EOF") {
			return "", 0, fmt.Errorf("%s: the block contains DOCS_EOF", b.Pos())
		}
		key := fmt.Sprintf("%d\x00%s", b.Exit(), body)
		if d, ok := ran[key]; ok { // the same commands ran above: check this sample against that output
			fmt.Fprintf(&s, "\n# %s: the same as %s\necho \"=== docs %s (output of %s)\"\ncd /tmp/docs/%d || fail cd\n", b.Pos(), d.pos, b.Pos(), d.pos, d.dir)
		} else {
			ran[key] = ranBlock{n, b.Pos()}
			fmt.Fprintf(&s, "\n# %s\necho \"=== docs %s\"\nmkdir -p /tmp/docs/%d && cd /tmp/docs/%d || fail mkdir\n", b.Pos(), b.Pos(), n, n)
			fmt.Fprintf(&s, "cat >block.sh <<'DOCS_EOF'\n%sDOCS_EOF\n", body)
			fmt.Fprintf(&s, "run %d || fail \"%s: exit $rc, want %d (twice)\"\n", b.Exit(), b.Pos(), b.Exit())
		}
		if i+1 < len(blocks) && blocks[i+1].File == b.File {
			if ko, _ := Classify(blocks[i+1]); ko == KindOutput {
				o := blocks[i+1]
				if strings.Contains(o.Body, "DOCS_EOF") {
					return "", 0, fmt.Errorf("%s: the block contains DOCS_EOF", o.Pos())
				}
				fmt.Fprintf(&s, "cat >want.txt <<'DOCS_EOF'\n%sDOCS_EOF\ncheck %s\n", o.Body, o.Pos())
			}
		}
	}
	s.WriteString("\necho \"docs: all blocks ran\"\n")
	return s.String(), n, nil
}
