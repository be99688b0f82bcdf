package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench"
)

// cmdDevices is 'rdmabench devices'.
func cmdDevices(fs *flag.FlagSet) action {
	asJSON := fs.Bool("json", false, "print JSON")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) != 0 {
			return usageError{fmt.Errorf("devices takes no arguments (got %q)", args)}
		}
		reps, err := bench.DescribeDevices()
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(reps)
		}
		return bench.WriteDevices(stdout, reps)
	}
}

// deviceFlags are the flags naming the local device, port and GID.
type deviceFlags struct {
	device   string
	port     int
	gidIndex int
}

func (d *deviceFlags) add(fs *flag.FlagSet) {
	fs.StringVarP(&d.device, "ib-dev", "d", "", "RDMA device (default: by route, the device whose GID table holds this side's control address); run and loopback take a list, dev1,dev2, and run the tests once per device")
	fs.IntVarP(&d.port, "ib-port", "i", 0, "device port, from 1 (default: the port that carries this side's control address, else the device's first active port)")
	fs.IntVarP(&d.gidIndex, "gid-index", "x", -1, "GID index (default: auto, a RoCE v2 GID matching the control connection's address)")
}
