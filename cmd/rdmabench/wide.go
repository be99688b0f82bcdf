package main

import (
	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/report"
)

// addWideFlag adds --wide to fs: the tables in full, however wide.
func addWideFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("wide", false, "print the tables whole, every column on one line however wide (default: fit 120 columns: "+
		"leave out the columns no test fills, then the least needed, or split the runs' columns into tables that fit)")
}

// tableWidth is the width the tables fit: report.Width, or none (0) with
// --wide.
func tableWidth(wide bool) int {
	if wide {
		return 0
	}
	return report.Width
}
