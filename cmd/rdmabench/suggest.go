package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"
)

// flagError is every command's FlagErrorFunc: a flag cobra cannot parse is
// a usage error (exit 2), and an unknown long flag gets the nearest flag
// of the command as a suggestion, as cobra does for commands:
// "rdmabench run --iter 5" suggests --iters, "--szie" --size.
func flagError(c *cobra.Command, err error) error {
	if c.Name() == "server" {
		if msg := clientOption(c, err); msg != "" {
			return usageError{errors.New(msg)}
		}
	}
	const prefix = "unknown flag: --"
	if msg := err.Error(); strings.HasPrefix(msg, prefix) {
		if s := nearestFlag(c.Flags(), strings.TrimPrefix(msg, prefix)); s != "" {
			err = fmt.Errorf("%w\n\nDid you mean this?\n\t--%s", err, s)
		}
	}
	return usageError{err}
}

// clientOption says, for a flag server does not take that run does (a
// test option, in rdmabench's or perftest's spelling: -a, -c UD, -D 10,
// --report_gbits, --data_validation), that it is the client's and names
// run's flag; "" for any other error. perftest takes its test options on
// both sides; an rdmabench server learns them from the client.
func clientOption(server *cobra.Command, err error) string {
	run, _, ferr := server.Root().Find([]string{"run"})
	if ferr != nil || run.Name() != "run" {
		return ""
	}
	fs := run.Flags()
	var f *flag.Flag
	var given string
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		given, f = "--"+name, fs.Lookup(name) // run's normalization reads perftest's names
	} else if rest, ok := strings.CutPrefix(msg, "unknown shorthand flag: '"); ok && len(rest) > 1 && rest[1] == '\'' {
		given, f = "-"+rest[:1], fs.ShorthandLookup(rest[:1])
	}
	if f == nil || f.Hidden {
		return ""
	}
	name := "--" + f.Name
	if f.Shorthand != "" {
		name = "-" + f.Shorthand + ", " + name
	}
	return fmt.Sprintf("server %s: the client's option (%s of 'rdmabench run HOST' and 'loopback'): "+
		"an rdmabench server takes the tests from the client and prints no results", given, name)
}

// nearestFlag is the visible long flag of fs closest to name: within an
// edit distance of 2 and of half name's length (a swap of two letters
// counts 1), or one that name is a prefix of (3 letters at least); ""
// when none is.
func nearestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(name, f.Name)
		if len(name) >= 3 && strings.HasPrefix(f.Name, name) && d > 1 {
			d = 1 // --iter for --iters, --dur for --duration
		}
		if d > len(name)/2 {
			return
		}
		if d < bestD || (d == bestD && f.Name < best) {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of adjacent letters.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
