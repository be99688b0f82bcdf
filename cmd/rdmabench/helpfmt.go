package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"
)

// The flags in --help: pflag's layout (-x, --name type, description),
// except that a boolean shows no [=true|false], a flag shows one default
// (none appended where its description states its own), and descriptions
// wrap to the terminal's width (helpWidth).

// defaultHelpWidth is the width of help written to what is not a
// terminal, columns.
const defaultHelpWidth = 120

// minHelpWidth is the narrowest width help wraps to, columns.
const minHelpWidth = 60

// useFlagUsages makes root's usage (and so every command's help) list
// the flags with flagUsages.
func useFlagUsages(root *cobra.Command) {
	cobra.AddTemplateFunc("flagUsages", func(fs *flag.FlagSet) string { return flagUsages(fs, helpWidth()) })
	t := root.UsageTemplate()
	t = strings.ReplaceAll(t, ".LocalFlags.FlagUsages", "flagUsages .LocalFlags")
	t = strings.ReplaceAll(t, ".InheritedFlags.FlagUsages", "flagUsages .InheritedFlags")
	root.SetUsageTemplate(t)
}

// helpWidth is the width help wraps to: $COLUMNS, else standard output's
// terminal width, else defaultHelpWidth; at least minHelpWidth.
func helpWidth() int {
	w := defaultHelpWidth
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		w = n
	} else if n := terminalWidth(os.Stdout); n > 0 {
		w = n
	}
	return max(w, minHelpWidth)
}

// terminalWidth is f's terminal width in columns, 0 when f is no terminal.
func terminalWidth(f *os.File) int {
	var ws struct{ row, col, x, y uint16 }
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws))); e != 0 {
		return 0
	}
	return int(ws.col)
}

// flagHelp is one flag as help and docs/flags.md show it.
type flagHelp struct {
	names   string // "-x, --gid-index" or "--bind"
	arg     string // the value's name ("int", "string", a name in `backquotes` of the usage); "" for a boolean
	usage   string // the description
	deflt   string // the default to show; "" for none
	boolean bool
}

// describeFlag is f as help shows it.
func describeFlag(f *flag.Flag) flagHelp {
	h := flagHelp{names: "--" + f.Name, boolean: f.Value.Type() == "bool"}
	if f.Shorthand != "" && f.ShorthandDeprecated == "" {
		h.names = "-" + f.Shorthand + ", --" + f.Name
	}
	h.arg, h.usage = flag.UnquoteUsage(f)
	if h.boolean {
		h.arg = ""
	}
	if !zeroDefault(f) && !strings.Contains(strings.ToLower(h.usage), "default") {
		h.deflt = f.DefValue
		if f.Value.Type() == "string" {
			h.deflt = strconv.Quote(f.DefValue)
		}
	}
	return h
}

// zeroDefault says f's default is its type's zero value (not shown).
func zeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "0s", "false", "[]", "<nil>":
		return true
	}
	return false
}

// flagUsages lists fs's visible flags for help, wrapped to width columns.
func flagUsages(fs *flag.FlagSet, width int) string {
	var hs []flagHelp
	col := 0
	fs.VisitAll(func(f *flag.Flag) {
		if f.Hidden {
			return
		}
		h := describeFlag(f)
		hs = append(hs, h)
		col = max(col, len(left(h)))
	})
	const maxCol = 40 // longer names take their description on the next line
	col = min(col, maxCol) + 3
	var b strings.Builder
	for _, h := range hs {
		l := left(h)
		text := h.usage
		if h.deflt != "" {
			text += " (default " + h.deflt + ")"
		}
		lines := wrap(text, width-col)
		if len(l)+3 > col {
			b.WriteString(l + "\n")
			l = ""
		}
		for i, line := range lines {
			if i > 0 {
				l = ""
			}
			fmt.Fprintf(&b, "%-*s%s\n", col, l, line)
		}
	}
	return b.String()
}

// left is the column of a flag's names and argument, indented.
func left(h flagHelp) string {
	s := "  " + h.names
	if !strings.HasPrefix(h.names, "-") || strings.HasPrefix(h.names, "--") {
		s = "      " + h.names
	}
	if h.arg != "" {
		s += " " + h.arg
	}
	return s
}

// wrap breaks text into lines of at most width runes at spaces; a word
// longer than width takes a line of its own.
func wrap(text string, width int) []string {
	width = max(width, 20)
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}
