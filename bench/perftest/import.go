package perftest

// Importing perftest's output as a result.Document (rdmabench import
// perftest), so that compare, report and plot read perftest's figures
// beside rdmabench's.

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// ImportedTool is the document's tool for imported perftest output.
const ImportedTool = "perftest"

// What perftest timed, in the words of result.Result.TimedInterval.
const (
	timedLat = "perftest: the time between consecutive posts of the initiator (one ping-pong iteration, " +
		"a full round trip), rdtsc; halved for send and write (RTT/2); the 2 largest samples dropped, " +
		"so t_max (max here) is the largest kept; t_typical is p50"
	timedLatDur = "perftest -D: the measured span over the iterations in it (a mean only), halved for send and write"
	timedBW     = "perftest: the first post to the last completion (bandwidth; no per-operation latency)"
)

// ToolOfTitle is the perftest tool whose test box has title ("Send
// Latency Test", "RDMA_Write BW Test", "Atomic FETCH_AND_ADD Latency
// Test", "Send Bidirectional BW Test"), and the atomic op ("fetch_add",
// "cmp_swap") for atomics.
func ToolOfTitle(title string) (t Tool, atomicOp string, ok bool) {
	f := strings.Fields(title)
	if len(f) < 3 || f[len(f)-1] != "Test" {
		return Tool{}, "", false
	}
	switch f[0] {
	case "Send":
		t.Verb = Send
	case "RDMA_Write":
		t.Verb = Write
	case "RDMA_Read":
		t.Verb = Read
	case "Atomic":
		t.Verb = Atomic
		atomicOp = "fetch_add"
		if strings.Contains(title, "CMP_AND_SWAP") {
			atomicOp = "cmp_swap"
		}
	default:
		return Tool{}, "", false
	}
	switch f[len(f)-2] {
	case "Latency":
		t.Lat = true
	case "BW":
	default:
		return Tool{}, "", false
	}
	t.Name = "ib_" + string(t.Verb) + "_" + t.mode()
	return t, atomicOp, true
}

// ImportOptions are what the output does not say itself.
type ImportOptions struct {
	// Tool overrides the tool named by the test box's title ("" takes
	// the title's).
	Tool string
	// Version is perftest's version ("" takes the output's Version line,
	// else "unknown").
	Version string
}

// ErrNoTable is an output without a result table: a READ or atomic
// latency server's (only the client prints one), a run that failed, or
// --output's bare numbers.
var ErrNoTable = errors.New("no result table")

// Import turns p, the output of one perftest run (file names it in the
// document's warnings), into a document of one result per table row.
func Import(p *Printed, file string, o ImportOptions) (*result.Document, error) {
	tool, atomicOp, ok := ToolOfTitle(p.Title)
	if o.Tool != "" {
		t, known := Tools[o.Tool]
		if !known {
			return nil, fmt.Errorf("perftest tool %q unknown; valid: ib_{send,write,read,atomic}_{lat,bw}", o.Tool)
		}
		if t.Verb == Atomic && atomicOp == "" {
			atomicOp = "fetch_add"
		}
		tool, ok = t, true
	}
	if !ok {
		return nil, &ParseError{Err: fmt.Errorf("%s: no perftest test title (got %q); name the tool with --tool", file, p.Title)}
	}
	if len(p.Rows) == 0 {
		what := ErrNoTable
		if len(p.Values) > 0 {
			what = fmt.Errorf("%w: --output prints bare numbers, which do not say what they are; import the table", ErrNoTable)
		}
		return nil, &ParseError{Err: fmt.Errorf("%s: %w", file, what)}
	}
	ver := o.Version
	if ver == "" {
		ver = p.Version
	}
	if ver == "" {
		ver = "unknown"
	}
	env, known := importEnv(p)
	doc := &result.Document{
		SchemaVersion: result.SchemaVersion,
		Tool:          ImportedTool,
		ToolVersion:   ver,
		CommandLine:   []string{tool.Name},
		Role:          "client",
		Env:           env,
		Warnings:      []string{fmt.Sprintf("imported from perftest's output %s (%s)", file, tool.Name)},
	}
	if p.Server {
		doc.Role = "server"
	}
	doc.SetEnvKnown(known...) // what perftest did not print is absent, not zero
	op := string(tool.Verb)
	if tool.Verb == Atomic {
		op = atomicOp
	}
	for _, row := range p.Rows {
		r, err := importRow(p, row, tool, op)
		if err != nil {
			return nil, &ParseError{Err: fmt.Errorf("%s: %q: %w", file, strings.TrimSpace(row.Line), err)}
		}
		doc.Results = append(doc.Results, r)
	}
	if len(p.Rows) > 0 && p.BWUnit == "MB/sec" {
		doc.Warnings = append(doc.Warnings, bwUnitNote(p))
	}
	return doc, nil
}

// importEnv is what the test box says of the environment, and the JSON
// names of the fields it says: the others perftest did not print.
func importEnv(p *Printed) (result.Env, []string) {
	var e result.Env
	known := []string{"clock_source"}
	str := func(label, key string, dst *string) {
		if v, ok := p.Setting(label); ok {
			*dst = v
			known = append(known, key)
		}
	}
	num := func(label, key string, dst *int) {
		if v, ok := p.SettingInt(label); ok {
			*dst = v
			known = append(known, key)
		}
	}
	str("Device", "device", &e.Device)
	str("Link type", "link_layer", &e.LinkLayer)
	num("Mtu", "path_mtu", &e.PathMTU)
	num("GID index", "gid_index", &e.GIDIndex)
	str("Connection type", "qp_type", &e.QPType)
	num("Max inline data", "inline_size_granted", &e.InlineSizeGranted)
	e.ClockSource = "rdtsc (perftest)"
	e.EnginePinnedCPU = -1 // not written: unknown
	return e, known
}

func importRow(p *Printed, row Row, tool Tool, op string) (result.Result, error) {
	get := func(k string) float64 { v, _ := p.Value(row, k); return v }
	r := result.Result{Op: op, Mode: "bw", SizeBytes: int(get(ColBytes)), Iterations: int64(get(ColIterations))}
	if tool.Lat {
		r.Mode = "lat"
	}
	r.TxDepth, _ = p.SettingInt("TX depth")
	r.CQMod, _ = p.SettingInt("CQ Moderation")
	r.RxDepth, _ = p.SettingInt("RX depth")
	r.Inline, _ = p.SettingInt("Max inline data")
	r.OutstandingReads, _ = p.SettingInt("Outstand reads")
	r.QPType, _ = p.Setting("Connection type")
	if q, _ := p.SettingInt("Number of qps"); q > 1 {
		r.QPs = q
	}
	r.Bidirectional = strings.Contains(p.Title, "Bidirectional")
	// µs to ns, rounded to perftest's printed precision: 523.065 µs is
	// 523065 ns, not 523064.99999999994
	us := func(k string) float64 { return math.Round(get(k)*1e6) / 1e3 }
	nanos := func(k string) result.Nanos {
		if p.Column(k) < 0 {
			return result.Nanos{}
		}
		return result.Nanos{NS: us(k), OK: true}
	}
	switch {
	case tool.Lat && p.Column(ColTypical) >= 0:
		r.TimedInterval = timedLat
		r.Latency = result.Latency{Count: r.Iterations, Min: us(ColMin), Mean: us(ColAvg), Stdev: us(ColStdev),
			P50: nanos(ColTypical), P99: nanos(ColP99), P99_9: nanos(ColP999), Max: us(ColMax)}
	case tool.Lat && p.Column(ColAvg) >= 0:
		r.TimedInterval = timedLatDur
		r.Latency = result.Latency{Count: r.Iterations, Mean: us(ColAvg)}
	case !tool.Lat && p.Column(ColBWAvg) >= 0:
		r.TimedInterval = timedBW
		bps, err := bytesPerSec(p, row)
		if err != nil {
			return r, err
		}
		r.Bandwidth = result.Bandwidth{MBPerSec: bps / 1e6, MiBPerSec: bps / (1 << 20), GbitPerSec: bps * 8 / 1e9, Mpps: get(ColMsgRate)}
		if mpps := get(ColMsgRate); mpps > 0 {
			r.DurationNS = int64(math.Round(float64(r.Iterations) / (mpps * 1e6) * 1e9))
		}
	default:
		return r, fmt.Errorf("a %s table needs %s columns; this one has %v", tool.Name, map[bool]string{true: "t_typical or t_avg", false: "BW average"}[tool.Lat], p.Labels)
	}
	return r, nil
}

// bytesPerSec is row's BW average in bytes/s. perftest divides by 2^20
// whether it labels the column MB/sec (up to 2024) or MiB/sec; Gb/sec is
// 10^9 bit/s (--report_gbits).
func bytesPerSec(p *Printed, row Row) (float64, error) {
	avg, _ := p.Value(row, ColBWAvg)
	switch p.BWUnit {
	case "MB/sec", "MiB/sec":
		return avg * (1 << 20), nil
	case "Gb/sec":
		return avg * 1e9 / 8, nil
	}
	return 0, fmt.Errorf("bandwidth unit %q unknown (perftest prints MB/sec, MiB/sec or Gb/sec)", p.BWUnit)
}

// bwUnitNote checks the first row's MB/sec against MsgRate × size: perftest
// 6.x's "MB/sec" is 2^20 bytes/s.
func bwUnitNote(p *Printed) string {
	row := p.Rows[0]
	avg, _ := p.Value(row, ColBWAvg)
	mpps, _ := p.Value(row, ColMsgRate)
	size, _ := p.Value(row, ColBytes)
	if avg <= 0 || mpps <= 0 || size <= 0 {
		return "perftest's MB/sec read as MiB/s (2^20 bytes/s, what perftest divides by); MsgRate could not check it"
	}
	mib := mpps * size * 1e6 / (1 << 20)
	if math.Abs(avg-mib)/avg < 0.02 {
		return "perftest's MB/sec read as MiB/s: checked against MsgRate × size"
	}
	return fmt.Sprintf("perftest's MB/sec read as MiB/s, but its BW average %.2f does not match MsgRate × size (%.2f MiB/s)", avg, mib)
}
