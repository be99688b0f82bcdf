package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/doctor"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/version"
)

// doctorLong is the description of 'rdmabench doctor'.
const doctorLong = `Checks this host for what makes RDMA numbers wrong before any test runs: every port
of every RDMA device, active or not, in rail order (or the one -d names): the port's
state, its RoCE MTU against the netdev's and against the port's largest, a RoCE v2 GID for each address, PFC and pause
frames, ECN/DCQCN, the NIC's interrupts against its NUMA node, the PCIe link, relaxed
ordering and ACS, memlock and the CPU frequency governor. Each check is PASS, WARN, FAIL
or UNKNOWN (what this host does not expose is never PASS), with the fix. With HOST (a
running 'rdmabench server') it checks the server's host too and compares both ends,
port by port on the same rail where both hosts have as many ports (else the port by
route): MTU, firmware, GID types, link speed. Exits 10 when a check fails
(docs/doctor.md).`

// doctorFailed is a doctor run with a failed check (exit 10).
type doctorFailed struct{ n int }

func (e doctorFailed) Error() string {
	return fmt.Sprintf("doctor: %d check(s) failed", e.n)
}

// cmdDoctor is 'rdmabench doctor [HOST]'.
func cmdDoctor(fs *flag.FlagSet) action {
	dev := fs.StringP("ib-dev", "d", "", "RDMA device to check (default: every port of every device, in rail order; with HOST the port by route, the device whose GID table holds this side's control address, is also compared with the server's)")
	ibPort := fs.IntP("ib-port", "i", 1, "device port (needs --ib-dev)")
	port := fs.IntP("port", "p", spec.DefaultPort, "TCP control port of the server (with HOST)")
	keyFile := addKeyFlag(fs, "to prove to the server (with HOST)")
	jsonPath := fs.String("json", "", "write the doctor document (bench/result/doctor.schema.json) to this file (- for stdout)")
	connTimeout := fs.Duration("connect-timeout", 10*time.Second, "give up connecting to the server after this long")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) > 1 {
			return usageError{fmt.Errorf("doctor takes at most one server (got %q)", args)}
		}
		if *ibPort < 1 || *ibPort > 255 {
			return usageError{fmt.Errorf("--ib-port %d out of range 1..255", *ibPort)}
		}
		if fs.Changed("ib-port") && *dev == "" {
			return usageError{fmt.Errorf("--ib-port %d names a port of --ib-dev: add -d DEVICE (without it doctor checks every port of every device)", *ibPort)}
		}
		if err := checkRanges(intRange{"port", int64(*port), 1, 65535}); err != nil {
			return err
		}
		if *connTimeout <= 0 {
			return usageError{fmt.Errorf("--connect-timeout %v: must be positive", *connTimeout)}
		}
		if err := checkWritable("json", *jsonPath); err != nil {
			return err
		}
		var rep bench.DoctorReport
		if len(args) == 1 {
			key, err := loadKey(*keyFile, stderr)
			if err != nil {
				return err
			}
			addr := net.JoinHostPort(args[0], strconv.Itoa(*port))
			if rep, err = bench.PeerDoctor(ctx, addr, *dev, *ibPort, key, *connTimeout); err != nil {
				return err
			}
		} else {
			rep = bench.LocalDoctor(*dev, *ibPort)
		}
		doc := &result.DoctorDocument{ToolVersion: version.String(), Time: time.Now().UTC().Truncate(time.Second),
			Local: rep.Local, Findings: rep.Findings, PeerAddress: rep.PeerAddress, Peer: rep.Peer, PeerFindings: rep.PeerFindings, Ports: rep.Ports}
		if *jsonPath != "-" {
			if err := doctor.WriteReport(stdout, doc, rep.DeviceReason, rep.Pairing); err != nil {
				return err
			}
		}
		if *jsonPath != "" {
			if err := result.WriteDoctorJSON(*jsonPath, doc); err != nil {
				return err
			}
		}
		n := 0
		all := doc.AllFindings()
		if len(doc.Ports) > 0 { // Local and Findings repeat a port
			all = all[2:]
		}
		for _, fs := range all {
			for _, f := range fs {
				if f.Status == result.DoctorFail {
					n++
				}
			}
		}
		if result.DoctorWorst(doc.AllFindings()...) == result.DoctorFail {
			return doctorFailed{max(n, 1)}
		}
		return nil
	}
}
