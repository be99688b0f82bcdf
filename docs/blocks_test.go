package docs

// The fenced code blocks of the Markdown files, their kinds, and what the checks need:
// the rdmabench commands in a shell block, output matching, the guest's fewer iterations.

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
// runs of white space one space (the samples of the blocks that need RDMA).
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
