// Package accept is `rdmabench accept`, a node's acceptance in one command:
// on every ACTIVE port, pinned to its NIC's NUMA node, the doctor's checks
// and loopback latency and bandwidth judged against thresholds by the
// interval rule of bench/expect; one verdict per NIC, a table and a
// document (result.AcceptDocument, accept.schema.json). The thresholds'
// defaults and their sources: docs/node-bringup.md.
package accept

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/expect"
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/version"
)

// The default thresholds, ngc_multinode_perf's: bandwidth at least 90 % of
// the port's rate, p50 latency at most 2.5 us for WRITE and SEND, 4.5 us
// for READ.
const (
	DefaultBW           = "90%"
	DefaultLatWriteSend = "p50=2.5us"
	DefaultLatRead      = "p50=4.5us"
	DefaultRepeat       = 3
)

// Config is one acceptance run.
type Config struct {
	Devices      []string     // only these devices; nil: every device
	BW           *expect.BW   // the bandwidth floor; nil: DefaultBW
	LatWriteSend []expect.Lat // WRITE's and SEND's ceilings; nil: DefaultLatWriteSend
	LatRead      []expect.Lat // READ's; nil: DefaultLatRead
	Ops          []string     // nil: write, send, read
	Iters        int64        // per run; 0: the defaults of each mode
	Duration     time.Duration
	Repeat       int // runs per test; 0: DefaultRepeat
	CommandLine  []string
	Progress     io.Writer // one line per port and test; nil: none
}

// defaults fills the zero fields of c.
func (c *Config) defaults() error {
	var err error
	if c.BW == nil {
		if c.BW, err = expect.ParseBW(DefaultBW); err != nil {
			return err
		}
	}
	if c.LatWriteSend == nil {
		if c.LatWriteSend, err = expect.ParseLat(DefaultLatWriteSend); err != nil {
			return err
		}
	}
	if c.LatRead == nil {
		if c.LatRead, err = expect.ParseLat(DefaultLatRead); err != nil {
			return err
		}
	}
	if c.Ops == nil {
		c.Ops = []string{result.OpWrite, result.OpSend, result.OpRead}
	}
	if c.Repeat == 0 {
		c.Repeat = DefaultRepeat
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return nil
}

// Specs are the tests of one port: latency and bandwidth of every op, at
// the default sizes (2 B and 64 KiB).
func (c *Config) Specs(rdmaCM bool) ([]spec.Spec, error) {
	plan := spec.Plan{Template: spec.Spec{Iters: c.Iters, Duration: c.Duration, Warmup: -1, Repeat: c.Repeat, RDMACM: rdmaCM},
		Ops: c.Ops, Modes: []string{result.ModeLat, result.ModeBW}}
	return plan.Specs()
}

// Check refuses a config whose tests cannot be made (a usage error).
func Check(c Config) error {
	if err := c.defaults(); err != nil {
		return err
	}
	specs, err := c.Specs(false)
	if err != nil {
		return err
	}
	for _, l := range [][]expect.Lat{c.LatWriteSend, c.LatRead} {
		if err := (expect.Expectations{BW: c.BW, Lat: l}).CheckSpecs(specs); err != nil {
			return err
		}
	}
	return nil
}

// Run checks every ACTIVE port of this host (of cfg.Devices) and returns
// the document. A port whose tests fail has the error in its NIC's entry
// and fails; Run's own error is for what stops every port (no device).
func Run(ctx context.Context, cfg Config) (*result.AcceptDocument, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	doc := &result.AcceptDocument{SchemaVersion: result.AcceptSchemaVersion, Kind: result.KindAccept, Tool: "rdmabench",
		ToolVersion: version.String(), CommandLine: cfg.CommandLine, Host: host, Start: time.Now(), Confidence: expect.Confidence,
		Thresholds: result.AcceptThresholds{BW: cfg.BW.Text, LatWriteSend: latText(cfg.LatWriteSend), LatRead: latText(cfg.LatRead), Repeat: cfg.Repeat},
		NICs:       []result.AcceptNIC{}}
	reps, err := device.Describe()
	if err != nil {
		return nil, err
	}
	for _, d := range cfg.Devices {
		if !slices.ContainsFunc(reps, func(r device.Report) bool { return r.Name == d }) {
			return nil, fmt.Errorf("accept: no RDMA device %q", d)
		}
	}
	for _, rep := range reps {
		if cfg.Devices != nil && !slices.Contains(cfg.Devices, rep.Name) {
			continue
		}
		for _, p := range rep.Ports {
			if p.State != "PORT_ACTIVE" {
				doc.Skipped = append(doc.Skipped, fmt.Sprintf("%s port %d: %s", rep.Name, p.Port, p.State))
				continue
			}
			if err := ctx.Err(); err != nil {
				return doc, err
			}
			fmt.Fprintf(cfg.Progress, "accept: %s port %d: doctor, then loopback latency and bandwidth\n", rep.Name, p.Port)
			doc.NICs = append(doc.NICs, checkPort(ctx, cfg, rep, p))
		}
	}
	var vs []string
	for _, n := range doc.NICs {
		vs = append(vs, n.Verdict)
	}
	doc.Verdict = result.AcceptWorst(vs...)
	if len(doc.NICs) == 0 {
		doc.Verdict = result.VerdictAcceptFail
	}
	doc.End = time.Now()
	return doc, nil
}

func latText(ls []expect.Lat) string {
	var s []string
	for _, l := range ls {
		s = append(s, l.Text)
	}
	return strings.Join(s, ",")
}

// checkPort is one NIC's verdict: the doctor, then the loopback tests.
func checkPort(ctx context.Context, cfg Config, rep device.Report, p device.PortReport) result.AcceptNIC {
	n := result.AcceptNIC{Device: rep.Name, Port: p.Port, LinkLayer: p.LinkLayer, NUMANode: -1,
		Doctor: []result.DoctorFinding{}, Checks: []result.AcceptCheck{}}
	var why []string
	dr := bench.LocalDoctor(rep.Name, p.Port)
	for _, f := range dr.Findings {
		n.Doctor = append(n.Doctor, f)
		if f.Status == result.DoctorFail {
			r := fmt.Sprintf("doctor %s: %s", f.Check, f.Detail)
			if f.Fix != "" {
				r += " (fix: " + f.Fix + ")"
			}
			why = append(why, r)
		}
	}
	verdicts := []string{}
	if len(why) > 0 {
		verdicts = append(verdicts, result.VerdictAcceptFail)
	}
	rdmaCM := rep.Transport == "iWARP"
	specs, err := cfg.Specs(rdmaCM)
	var doc *result.Document
	if err == nil {
		doc, err = bench.RunLoopback(ctx, bench.RunConfig{
			Client: bench.ClientConfig{Device: rep.Name, Port: p.Port, GIDIndex: -1, RDMACM: rdmaCM,
				Run: measure.Options{CPU: -1, Unit: result.UnitMiB}},
			Specs: specs, ConnTimeout: 30 * time.Second, CommandLine: cfg.CommandLine,
		}, log.New(io.Discard, "", 0))
	}
	if err != nil {
		n.Error = err.Error()
		why = append(why, "tests: "+err.Error())
		verdicts = append(verdicts, result.VerdictAcceptFail)
	}
	if doc != nil {
		n.LinkSpeed = doc.Env.LinkSpeed
		n.RateGbps, _, _ = expect.PortRate(&doc.Env)
		if doc.Env.NUMA != nil {
			n.NUMANode = doc.Env.NUMA.Node
		}
		for i := range doc.Results {
			r := &doc.Results[i]
			lat := cfg.LatWriteSend
			if r.Op == result.OpRead {
				lat = cfg.LatRead
			}
			for _, v := range expect.JudgeResult(r, &doc.Env, expect.Expectations{BW: cfg.BW, Lat: lat}) {
				n.Checks = append(n.Checks, v.Record())
				verdicts = append(verdicts, v.Verdict)
				if v.Verdict != expect.Pass {
					why = append(why, v.String())
				}
			}
		}
	}
	n.Verdict = result.AcceptWorst(verdicts...)
	n.Reasons = why
	return n
}

// WriteTable writes the summary a human reads at a glance: one line per
// NIC with its verdict and, for those that did not pass, why; then the
// node's verdict.
func WriteTable(w io.Writer, doc *result.AcceptDocument) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Node acceptance of %s: bandwidth >= %s, latency %s (WRITE, SEND), %s (READ); %d runs a test, judged on %g%% intervals\n\n",
		doc.Host, doc.Thresholds.BW, doc.Thresholds.LatWriteSend, doc.Thresholds.LatRead, doc.Thresholds.Repeat, doc.Confidence*100)
	fmt.Fprintf(&b, "%-12s %-4s %-6s %-12s %-14s %s\n", "NIC", "PORT", "NUMA", "RATE", "VERDICT", "CHECKS")
	for _, n := range doc.NICs {
		numa := "-"
		if n.NUMANode >= 0 {
			numa = fmt.Sprint(n.NUMANode)
		}
		rate := "-"
		if n.RateGbps > 0 {
			rate = fmt.Sprintf("%g Gb/s", n.RateGbps)
		}
		fmt.Fprintf(&b, "%-12s %-4d %-6s %-12s %-14s %s\n", n.Device, n.Port, numa, rate, strings.ToUpper(n.Verdict), summary(n))
	}
	for _, n := range doc.NICs {
		if len(n.Reasons) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s port %d: %s, because\n", n.Device, n.Port, strings.ToUpper(n.Verdict))
		for _, r := range n.Reasons {
			fmt.Fprintf(&b, "  %s\n", r)
		}
	}
	for _, s := range doc.Skipped {
		fmt.Fprintf(&b, "skipped: %s\n", s)
	}
	fmt.Fprintf(&b, "\nnode: %s (%s)\n", strings.ToUpper(doc.Verdict), counts(doc))
	_, err := io.WriteString(w, b.String())
	return err
}

// summary is a NIC's checks in a few words: "6 pass" or "4 pass, 1 fail, 1 cannot tell".
func summary(n result.AcceptNIC) string {
	c := map[string]int{}
	for _, k := range n.Checks {
		c[k.Verdict]++
	}
	s := fmt.Sprintf("%d pass, %d fail, %d cannot tell", c[expect.Pass], c[expect.Fail], c[expect.CannotTell])
	if n.Error != "" {
		s += "; tests failed"
	}
	bad := 0
	for _, f := range n.Doctor {
		if f.Status == result.DoctorFail {
			bad++
		}
	}
	if bad > 0 {
		s += fmt.Sprintf("; doctor: %d failed", bad)
	}
	return s
}

func counts(doc *result.AcceptDocument) string {
	c := map[string][]string{}
	for _, n := range doc.NICs {
		c[n.Verdict] = append(c[n.Verdict], n.Device)
	}
	var parts []string
	for _, v := range result.AcceptVerdicts {
		if len(c[v]) > 0 {
			parts = append(parts, fmt.Sprintf("%s: %s", v, strings.Join(c[v], ", ")))
		}
	}
	if len(parts) == 0 {
		return "no ACTIVE port"
	}
	return strings.Join(parts, "; ")
}

// Error is the outcome of a node that did not pass: errors.As finds an
// *expect.FailError in it when a NIC failed, an *expect.CannotTellError
// when none failed but one could not be told (the exit codes follow).
type Error struct {
	Verdict string
	NICs    []string // the NICs with that verdict
}

func (e *Error) Error() string {
	return fmt.Sprintf("accept: node %s: %s", strings.ToUpper(e.Verdict), strings.Join(e.NICs, ", "))
}

// Unwrap is the expectation outcome the verdict maps to.
func (e *Error) Unwrap() error {
	if e.Verdict == result.VerdictAcceptTell {
		return &expect.CannotTellError{}
	}
	return &expect.FailError{}
}

// Outcome is nil for a node that passed, else an *Error; with no ACTIVE
// port at all, device.ErrPortNotActive (exit 3).
func Outcome(doc *result.AcceptDocument) error {
	if len(doc.NICs) == 0 {
		return fmt.Errorf("accept: no ACTIVE port to check (skipped: %s): %w", strings.Join(doc.Skipped, "; "), device.ErrPortNotActive)
	}
	if doc.Verdict == result.VerdictAcceptPass {
		return nil
	}
	e := &Error{Verdict: doc.Verdict}
	for _, n := range doc.NICs {
		if n.Verdict == doc.Verdict {
			e.NICs = append(e.NICs, fmt.Sprintf("%s port %d", n.Device, n.Port))
		}
	}
	return e
}
