package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/accept"
	"github.com/rdmabench/rdmabench/bench/expect"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// acceptLong is the description of 'rdmabench accept'.
const acceptLong = `A node's acceptance in one command. On every ACTIVE port of every RDMA
device (or of -d's), pinned to its NIC's NUMA node: the doctor's checks of the
port, then loopback latency (2 B) and bandwidth (64 KiB) of WRITE, SEND and
READ, each run --repeat times and judged against the thresholds by the interval
rule: a bound passes when the whole 95% interval clears it, fails when the
whole interval misses it, else the verdict is "cannot tell", with the --repeat
that would settle it. One verdict per NIC (fail: a doctor check or a bound
failed, or a test did not complete), a table, and with --json a document
(bench/result/accept.schema.json). The defaults are ngc_multinode_perf's:
bandwidth at least 90% of the port's data rate, p50 at most 2.5 us for WRITE
and SEND and 4.5 us for READ (docs/node-bringup.md). Exit 0: every NIC
passed; 11: one failed; 12: none failed, one could not be told; 3: no
ACTIVE port.`

// cmdAccept is 'rdmabench accept'.
func cmdAccept(fs *flag.FlagSet) action {
	devs := fs.StringP("ib-dev", "d", "", "only these devices, dev1,dev2 (default: every device; each ACTIVE port is checked)")
	bw := fs.String("expect-bw", accept.DefaultBW, "bandwidth floor: PCT% of the port's data rate after line encoding, or a rate in "+expect.RateUnits()+" (375Gb/s)")
	latWS := fs.String("expect-lat", accept.DefaultLatWriteSend, "WRITE's and SEND's latency ceilings, in ns, us or ms: p50=2.5us,p99=5us")
	latR := fs.String("expect-lat-read", accept.DefaultLatRead, "READ's latency ceilings, as --expect-lat")
	ops := fs.String("op", "write,send,read", "operations: write, send, read")
	iters := fs.Int64P("iters", "n", 0, "measured iterations per run (default: 10000 lat, 5000 bw)")
	dur := new(time.Duration)
	fs.VarP((*secondsDuration)(dur), "duration", "D", "measure each run for this long instead of a count: seconds or a duration (500ms)")
	repeat := fs.Int("repeat", accept.DefaultRepeat, "runs per test: the spread the bandwidth's interval is made of (1: bandwidth cannot be told)")
	jsonPath := fs.String("json", "", "write the accept document (bench/result/accept.schema.json) to this file (- for stdout)")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) > 0 {
			return usageError{fmt.Errorf("accept takes no arguments (got %q)", args)}
		}
		if err := checkRanges(intRange{"repeat", int64(*repeat), 1, spec.MaxRepeat}); err != nil {
			return err
		}
		if err := checkWritable("json", *jsonPath); err != nil {
			return err
		}
		cfg := accept.Config{Iters: *iters, Duration: *dur, Repeat: *repeat, CommandLine: os.Args, Progress: stderr}
		var err error
		if cfg.BW, err = expect.ParseBW(*bw); err != nil {
			return usageError{err}
		}
		if cfg.LatWriteSend, err = expect.ParseLat(*latWS); err != nil {
			return usageError{err}
		}
		if cfg.LatRead, err = expect.ParseLat(*latR); err != nil {
			return usageError{fmt.Errorf("--expect-lat-read: %w", err)}
		}
		if cfg.Ops, err = spec.ParseList("op", *ops, []string{result.OpWrite, result.OpSend, result.OpRead}); err != nil {
			return usageError{err}
		}
		if *devs != "" {
			cfg.Devices = strings.Split(*devs, ",")
		}
		if err := accept.Check(cfg); err != nil {
			return usageError{err}
		}
		doc, err := accept.Run(ctx, cfg)
		if err != nil {
			return err
		}
		out := stdout
		if *jsonPath == "-" {
			out = stderr
		}
		if err := accept.WriteTable(out, doc); err != nil {
			return err
		}
		if *jsonPath != "" {
			if err := result.WriteJSON(*jsonPath, doc); err != nil {
				return err
			}
		}
		return accept.Outcome(doc)
	}
}
