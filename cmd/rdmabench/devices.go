package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/device"
)

// cmdDevices is 'rdmabench devices'.
func cmdDevices(fs *flag.FlagSet) action {
	asJSON := fs.Bool("json", false, "print JSON")
	asTSV := fs.Bool("tsv", false, "print one tab-separated line per port after a header line: "+strings.Join(device.TSVColumns, ", ")+
		"; with FILE, the ports of FILE (a saved 'devices --json') instead of this host's")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if *asJSON && *asTSV {
			return usageError{errors.New("devices: --json or --tsv, not both")}
		}
		if len(args) != 0 && !(*asTSV && len(args) == 1) {
			return usageError{fmt.Errorf("devices takes no arguments, or with --tsv one FILE of 'devices --json' (got %q)", args)}
		}
		if len(args) == 1 {
			reps, err := readDevicesFile(args[0])
			if err != nil {
				return err
			}
			return device.WriteTSV(stdout, reps)
		}
		reps, err := device.Describe()
		if err != nil {
			return err
		}
		if *asTSV {
			return device.WriteTSV(stdout, reps)
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(reps)
		}
		return device.WriteReports(stdout, reps)
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

// readDevicesFile reads a 'devices --json' document ("-": stdin).
func readDevicesFile(path string) ([]device.Report, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, inputError{fmt.Errorf("devices: %w", err)}
	}
	var reps []device.Report
	if err := json.Unmarshal(b, &reps); err != nil {
		return nil, inputError{fmt.Errorf("%s: not a 'devices --json' document: %w", path, err)}
	}
	return reps, nil
}
