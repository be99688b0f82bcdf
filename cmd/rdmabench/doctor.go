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
const doctorLong = `Checks this host for what makes RDMA numbers wrong before any test runs: the port's
state, its RoCE MTU against the netdev's, a RoCE v2 GID for each address, PFC and pause
frames, ECN/DCQCN, the NIC's interrupts against its NUMA node, the PCIe link, relaxed
ordering and ACS, memlock and the CPU frequency governor. Each check is PASS, WARN, FAIL
or UNKNOWN (what this host does not expose is never PASS), with the fix. With HOST (a
running 'rdmabench server') it checks the server's host too and compares both ends:
MTU, firmware, GID types, link speed. Exits 10 when a check fails (docs/doctor.md).`

// doctorFailed is a doctor run with a failed check (exit 10).
type doctorFailed struct{ n int }

func (e doctorFailed) Error() string {
	return fmt.Sprintf("doctor: %d check(s) failed", e.n)
}

// cmdDoctor is 'rdmabench doctor [HOST]'.
func cmdDoctor(fs *flag.FlagSet) action {
	dev := fs.StringP("ib-dev", "d", "", "RDMA device to check (default: with HOST by route, the device whose GID table holds this side's control address; else the first with an active port)")
	ibPort := fs.IntP("ib-port", "i", 1, "device port")
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
			Local: rep.Local, Findings: rep.Findings, PeerAddress: rep.PeerAddress, Peer: rep.Peer, PeerFindings: rep.PeerFindings}
		if *jsonPath != "-" {
			if err := doctor.WriteReport(stdout, doc, rep.DeviceReason); err != nil {
				return err
			}
		}
		if *jsonPath != "" {
			if err := result.WriteDoctorJSON(*jsonPath, doc); err != nil {
				return err
			}
		}
		n := 0
		for _, f := range append(doc.Findings, doc.PeerFindings...) {
			if f.Status == result.DoctorFail {
				n++
			}
		}
		if n > 0 {
			return doctorFailed{n}
		}
		return nil
	}
}
