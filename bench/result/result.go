package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rdmabench/rdmabench/hist"
)

// SchemaVersion is the version of the JSON result document (Document). It
// changes when a field is removed or changes meaning; added fields keep it.
const SchemaVersion = 1

// Document is the JSON result of one rdmabench run, written whole at the end
// of the run by WriteJSONFile.
type Document struct {
	SchemaVersion int       `json:"schema_version"` // SchemaVersion
	Tool          string    `json:"tool"`           // "rdmabench"
	ToolVersion   string    `json:"tool_version"`
	CommandLine   []string  `json:"command_line"` // os.Args, unquoted
	Start         time.Time `json:"start_time"`
	End           time.Time `json:"end_time"`
	Role          string    `json:"role"`           // "loopback", "client", or "dropin-server" (the perftest drop-in's server)
	Peer          string    `json:"peer,omitempty"` // server address, for client runs
	Env           Env       `json:"environment"`
	// ServerEnv is the server's environment in a client run (nil in
	// loopback runs, where Env describes both ends, and from older servers).
	ServerEnv *Env     `json:"server_environment,omitempty"`
	Results   []Result `json:"results"`
	Warnings  []string `json:"warnings,omitempty"`
	// Partial marks a run that ended before its last test (a failure, a
	// signal, --run-timeout): Results holds the tests that finished.
	Partial bool `json:"partial,omitempty"`
	// PeakRSSBytes is the process's peak resident set size at the end of
	// the run (getrusage ru_maxrss), bytes.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// LoadSweeps are the latency-against-load sweeps of the run
	// (--load-sweep); their tests' results are in Results too.
	LoadSweeps []LoadSweep `json:"load_sweeps,omitempty"`

	// envKeys are the members of "environment" the document holds (nil:
	// all of them): see EnvKnown.
	envKeys map[string]bool
}

// Env describes where a run took place: host, device, port, GID, clock and
// CPU. device.CollectEnv fills what it can query; the engine fills PathMTU, the GID
// fields, InlineSizeGranted and EnginePinnedCPU.
type Env struct {
	Host            string `json:"host"`
	Kernel          string `json:"kernel"`            // uname release and version
	RDMACoreVersion string `json:"rdma_core_version"` // e.g. "44.0-2" (dpkg) or "44.0" (library file name); "" if unknown

	Device string `json:"device"` // e.g. "rxe0"
	// DeviceReason says why the device was chosen: --ib-dev, by route (its
	// GID table holds the control connection's address), rdma_cm, first.
	DeviceReason     string `json:"device_reason,omitempty"`
	Driver           string `json:"driver"`   // kernel driver, e.g. "rdma_rxe"
	Firmware         string `json:"firmware"` // ibv_device_attr.fw_ver
	VendorID         uint32 `json:"vendor_id"`
	VendorPartID     uint32 `json:"vendor_part_id"`
	SoftwareRDMA     bool   `json:"software_rdma"`                // rxe or siw
	SoftwareRDMANote string `json:"software_rdma_note,omitempty"` // why such numbers are not hardware numbers

	Port      int    `json:"port"`
	Netdev    string `json:"netdev,omitempty"` // the network device of the chosen GID (RoCE, iWARP), e.g. "eth0"
	LinkLayer string `json:"link_layer"`       // "Ethernet" or "InfiniBand"
	// Transport is the fabric: "InfiniBand", "RoCE", "iWARP" or "TCP" (the
	// kernel TCP baseline); "" in older documents.
	Transport string  `json:"transport,omitempty"`
	ActiveMTU int     `json:"active_mtu"` // bytes
	PathMTU   int     `json:"path_mtu"`   // bytes; the MTU the QPs use
	LinkSpeed string  `json:"link_speed"` // e.g. "100.0 Gbps"
	LinkGbps  float64 `json:"link_gbps"`  // nominal link rate, 10^9 bit/s
	// LinkDataGbps is the data rate of the link, 10^9 bit/s: the nominal
	// rate less line encoding (8b/10b on InfiniBand SDR, DDR and QDR,
	// 64b/66b from FDR on); link_utilization is over it. 0 when unknown.
	LinkDataGbps float64 `json:"link_data_gbps,omitempty"`

	GIDIndex  int    `json:"gid_index"`
	GIDType   string `json:"gid_type"`   // e.g. "RoCE v2"
	GID       string `json:"gid"`        // e.g. "::ffff:127.0.0.1"
	GIDReason string `json:"gid_reason"` // why this GID was chosen

	InlineSizeGranted int    `json:"inline_size_granted"` // bytes, as granted by ibv_create_qp
	QPType            string `json:"qp_type"`             // "RC"

	ClockSource       string  `json:"clock_source"`        // the C loops' clock: "CLOCK_MONOTONIC_RAW", "tsc" or "cntvct" (internal/clock)
	ClockRateHz       float64 `json:"clock_rate_hz"`       // 1e9: timestamps are ns
	ClockResolutionNS int64   `json:"clock_resolution_ns"` // clock_getres
	ClockReadCostNS   float64 `json:"clock_read_cost_ns"`  // measured mean cost of one clock read in the engine
	KernelClocksource string  `json:"kernel_clocksource"`  // e.g. "tsc", "hpet"
	// ClockReason is why the loops' clock is clock_source (--clock and
	// what the rule found); ClockCalibration the counter's calibration
	// against CLOCK_MONOTONIC_RAW (nil on CLOCK_MONOTONIC_RAW).
	ClockReason      string            `json:"clock_reason,omitempty"`
	ClockCalibration *ClockCalibration `json:"clock_calibration,omitempty"`

	CPUModel        string `json:"cpu_model"`
	NumCPU          int    `json:"num_cpu"`
	GoVersion       string `json:"go_version"`
	EnginePinnedCPU int    `json:"engine_pinned_cpu"` // CPU the engine thread is pinned to; -1 when not pinned

	Checks EnvChecks `json:"checks"` // CheckEnv: governor, TSC, SMT, NUMA, memlock
	// Doctor is the status of each of `rdmabench doctor`'s checks of this
	// side's host, device and netdev (bench/doctor); nil in older documents.
	Doctor []DoctorCheck `json:"doctor,omitempty"`
	// NUMA is this side's NUMA placement of engine threads and registered
	// memory (nil: the TCP baseline, or an older document).
	NUMA *NUMAPlacement `json:"numa,omitempty"`
}

// Result is one measured test: one op, one mode, one message size.
type Result struct {
	Op            string `json:"op"`                // "send", "write", "read", "fetch_add", "cmp_swap", "write_imm", "send_imm"
	Mode          string `json:"mode"`              // "lat" or "bw"
	SizeBytes     int    `json:"size_bytes"`        // message size, bytes
	Iterations    int64  `json:"iterations"`        // measured iterations: samples in lat mode, operations in bw mode
	Warmup        int64  `json:"warmup_iterations"` // iterations run before measuring
	DurationNS    int64  `json:"duration_ns"`       // measured span, ns
	TimedInterval string `json:"timed_interval"`    // what one latency sample times, in plain words

	TxDepth int `json:"tx_depth"`
	CQMod   int `json:"cq_mod"`
	RxDepth int `json:"rx_depth"`
	// Inline is the client QP's inline size, bytes (messages up to it are
	// sent inline), and InlineReason why: the policy and what decided it.
	Inline       int    `json:"inline_bytes"`
	InlineReason string `json:"inline_reason,omitempty"`
	// QPTimeout (ACK timeout exponent), RetryCount, RNRRetry and
	// OutstandingReads (the client QP's max_rd_atomic) are the RDMA QP
	// attributes the test ran with; 0 for TCP and older results.
	QPTimeout        int `json:"qp_timeout,omitempty"`
	RetryCount       int `json:"retry_count,omitempty"`
	RNRRetry         int `json:"rnr_retry,omitempty"`
	OutstandingReads int `json:"outstanding_reads,omitempty"`

	// Latency is the distribution of the timed interval in ns: the sample
	// latency in lat mode, the completion latency (post to completion of a
	// signaled work request) in bw mode.
	Latency Latency `json:"latency_ns"`
	// RTT is the full round trip in ns when Latency holds half of it
	// (SEND and WRITE latency); nil otherwise.
	RTT       *Latency   `json:"rtt_ns,omitempty"`
	Bandwidth Bandwidth  `json:"bandwidth"`
	Intervals []Interval `json:"intervals,omitempty"` // per-interval figures in duration mode
	// PerftestPeak is perftest's "BW peak" where the drop-in faced a
	// perftest tool and computed it as perftest does (bw mode, iterations,
	// no -N): the best rate over any window of messages from the post of
	// the first to the completion of the last (docs/perftest.md); nil
	// otherwise.
	PerftestPeak *Bandwidth `json:"perftest_peak,omitempty"`

	// Histogram is the HdrHistogram of the recorded samples in compressed
	// V2 base64 form (hist.Encode), in ns. The latency_ns values are these
	// values divided by HistogramDivisor (2 when latency_ns is RTT/2).
	// PostList is the number of work requests chained per post (bw mode).
	PostList int `json:"post_list,omitempty"`
	// Event is set when completions were awaited on completion channels
	// (interrupts) instead of busy polling.
	Event bool `json:"event,omitempty"`
	// QPType is the transport of the measured QP: "RC", "UC" or "UD"
	// (empty for TCP and for results written before it existed).
	QPType string `json:"qp_type,omitempty"`
	// LostMessages counts SENDs of an unreliable (UC/UD) bandwidth test
	// that the server never received (warm-up included): no retransmission.
	LostMessages int64 `json:"lost_messages,omitempty"`
	// CPU is the CPU time each side's engine thread spent on the test.
	CPU *CPUUsage `json:"cpu,omitempty"`
	// LinkUtilization is the bandwidth over the port's data rate
	// (Env.LinkDataGbps: active speed × width × line encoding), 0..1; for bidirectional tests the sum of both
	// directions over twice that rate; 0 when the rate is unknown.
	LinkUtilization float64 `json:"link_utilization"`
	// Load is set for latency-under-load tests: the background traffic.
	Load *LoadResult `json:"load,omitempty"`
	// OpenLoop is set for open-loop (--rate) latency tests.
	OpenLoop *OpenLoop `json:"open_loop,omitempty"`

	Histogram        string  `json:"histogram"`
	HistogramDivisor float64 `json:"histogram_divisor"`
	Samples          int64   `json:"samples"` // values in Histogram

	// Transport is "tcp" for the kernel-TCP baseline; empty for RDMA.
	Transport string `json:"transport,omitempty"`

	// QPs and Threads are set for multi-QP bandwidth tests (--qps, --threads):
	// the figures above are the aggregate over all QPs (bandwidth: total
	// bytes over the earliest first post to the latest last completion;
	// latency: every QP's completions merged), PerQP has each QP's own.
	// Connection is how the test's QPs were connected (rdma_cm or the
	// exchange on the control connection) and each one's setup time.
	Connection *ConnSetup `json:"connection,omitempty"`

	QPs     int        `json:"qps,omitempty"`
	Threads int        `json:"threads,omitempty"`
	PerQP   []QPResult `json:"per_qp,omitempty"`

	// MRMode is how the data path registered its memory (RDMA tests):
	// "pool" (a fresh pool per test, registered once), "per-op" (the
	// client registered each operation's local buffer around it) or "odp"
	// (On-Demand Paging pools). Empty for TCP and older results.
	MRMode string `json:"mr_mode,omitempty"`
	// HugePages is set when the data path buffers came from huge pages.
	HugePages bool `json:"hugepages,omitempty"`
	// Counters are the RDMA port counters that moved during the test, on
	// each side (RDMA tests whose ports' sysfs counters could be read).
	Counters *CounterDeltas `json:"counters,omitempty"`

	// Bidirectional is set for bidirectional bandwidth tests (-b): both
	// sides posted the operation towards each other at once, from one
	// barrier. Iterations, Warmup and Bandwidth (data and message rate) are
	// then the sums over both sides, as perftest -b reports, and DurationNS
	// the longer side's span; Latency holds the client's completions. Sides
	// has each side's own figures.
	Bidirectional bool        `json:"bidirectional,omitempty"`
	Sides         *BidirSides `json:"sides,omitempty"`
	// SRQ is set when the receiving QPs of the test took their receives
	// from a shared receive queue (--srq).
	SRQ bool `json:"srq,omitempty"`
	// Verify is set when payloads were checked (--verify), in a pass after
	// the measured run: no figure above includes it.
	Verify *Verification `json:"verify,omitempty"`

	// Runs and Repeat are set when the test ran several times (--repeat):
	// each run's figures, and how far each figure spread. The figures above
	// are then the medians of the runs' (see CombineRuns).
	Runs   []RunFigures `json:"runs,omitempty"`
	Repeat *Repeat      `json:"repeat,omitempty"`
	// RateLimit is set when the client's sending was shaped.
	RateLimit *RateLimit `json:"rate_limit,omitempty"`
	// Choices are the perftest differences that are options, as this RDMA
	// test ran (nil for TCP and older results).
	Choices *Choices `json:"choices,omitempty"`
	// Workload is where the operations landed and what each carried
	// (--region, --access, --mrs, --sge), when any of them was set.
	Workload *Workload `json:"workload,omitempty"`

	// PostingPauses is how the client's bandwidth loop stopped posting
	// during the measured span (single-QP unidirectional RDMA bandwidth
	// tests): nil elsewhere.
	PostingPauses *PostingPauses `json:"posting_pauses,omitempty"`

	// stats is what SetLatency reports (UseStats); not part of the document.
	stats Stats
}

// Verification is what the --verify pass of a test checked: Messages
// messages, each filled with a pattern of the test and the message by the
// side that sends (or, for READ, is read from) and compared byte for byte
// by the side that receives them.
type Verification struct {
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"` // payload bytes compared
	// CheckedBy is the side that compared: "server" (send, write: what
	// arrived) or "client" (read: what it read).
	CheckedBy string `json:"checked_by"`
}

// UseStats sets the percentiles and confidence SetLatency reports (the
// default: DefaultPercentiles at 95 %).
func (r *Result) UseStats(st Stats) { r.stats = st }

// SetLatency fills r.Latency from h divided by div (see NewLatency),
// r.Histogram, r.HistogramDivisor and r.Samples from h, and, when div is not
// 1, r.RTT from h undivided. h holds the recorded samples in ns.
func (r *Result) SetLatency(h *hist.Histogram, div float64) error {
	div = Divisor(div)
	enc, err := h.Encode()
	if err != nil {
		return err
	}
	r.Latency = NewLatencyAt(h, div, r.stats)
	r.RTT = nil
	if div != 1 {
		rtt := NewLatencyAt(h, 1, r.stats)
		r.RTT = &rtt
	}
	r.Histogram, r.HistogramDivisor, r.Samples = enc, div, h.Count()
	return nil
}

// DecodeHistogram decodes r.Histogram. Its values are in ns, before division
// by r.HistogramDivisor.
func (r *Result) DecodeHistogram() (*hist.Histogram, error) {
	if r.Histogram == "" {
		return nil, errors.New("the result has no histogram")
	}
	return hist.Decode(r.Histogram)
}

// Bandwidth is a data and message rate.
type Bandwidth struct {
	MBPerSec   float64 `json:"mb_per_s"`   // 10^6 bytes/s
	MiBPerSec  float64 `json:"mib_per_s"`  // 2^20 bytes/s
	GbitPerSec float64 `json:"gbit_per_s"` // 10^9 bit/s
	Mpps       float64 `json:"mpps"`       // 10^6 messages/s
}

// NewBandwidth returns the rate of msgs messages of bytesPerMsg bytes each
// moved in ns nanoseconds, or zero for ns <= 0.
func NewBandwidth(bytesPerMsg int, msgs int64, ns int64) Bandwidth {
	if ns <= 0 || msgs <= 0 {
		return Bandwidth{}
	}
	sec := float64(ns) / 1e9
	bps := float64(bytesPerMsg) * float64(msgs) / sec
	return Bandwidth{
		MBPerSec:   bps / 1e6,
		MiBPerSec:  bps / (1 << 20),
		GbitPerSec: bps * 8 / 1e9,
		Mpps:       float64(msgs) / sec / 1e6,
	}
}

// In returns the data rate in unit (UnitMiB, UnitMB or UnitGb) and the
// unit's label, such as "MiB/sec".
func (b Bandwidth) In(unit string) (v float64, label string, err error) {
	switch unit {
	case UnitMiB:
		return b.MiBPerSec, "MiB/sec", nil
	case UnitMB:
		return b.MBPerSec, "MB/sec", nil
	case UnitGb:
		return b.GbitPerSec, "Gb/sec", nil
	}
	return 0, "", fmt.Errorf("bandwidth unit %q is not one of %s, %s, %s", unit, UnitMiB, UnitMB, UnitGb)
}

// CPUUsage is the user and system CPU time of the client's and the server's
// engine threads during the measured part of a test (getrusage
// RUSAGE_THREAD), ns, and per message. Software RDMA does its protocol work
// in the poster's system calls, so it shows up as system time. The server's
// figures are 0 when its CPU takes no part (READ, WRITE bandwidth, atomics).
type CPUUsage struct {
	ClientUserNS   int64   `json:"client_user_ns"`
	ClientSysNS    int64   `json:"client_sys_ns"`
	ServerUserNS   int64   `json:"server_user_ns"`
	ServerSysNS    int64   `json:"server_sys_ns"`
	ClientUSPerMsg float64 `json:"client_us_per_msg"`
	ServerUSPerMsg float64 `json:"server_us_per_msg"`
}

// LoadResult is the background traffic that ran during a latency test.
type LoadResult struct {
	QPs       int       `json:"qps"`
	Op        string    `json:"op"`
	SizeBytes int       `json:"size_bytes"`
	Ops       int64     `json:"ops"`       // completed on all load QPs
	Bandwidth Bandwidth `json:"bandwidth"` // aggregate, over the load's whole span
	// The attacker knobs (rdmabench isolation): the odd load QPs' size,
	// SENDs at one posted receive per QP (RNR NAKs), and the registration
	// churn: its buffer size, the register/deregister pairs completed and
	// their rate over the churn's span.
	AltSizeBytes        int     `json:"alt_size_bytes,omitempty"`
	RNR                 bool    `json:"rnr,omitempty"`
	ChurnSizeBytes      int     `json:"churn_size_bytes,omitempty"`
	Registrations       int64   `json:"registrations,omitempty"`
	RegistrationsPerSec float64 `json:"registrations_per_sec,omitempty"`
	// MRs is how many MRs (on each side) the load QPs' operations spread
	// over round robin (mr-thrash); absent: one buffer each.
	MRs int `json:"mrs,omitempty"`
}

// OpenLoop describes an open-loop latency test: the requested schedule and
// the rate achieved over the measured span.
type OpenLoop struct {
	Schedule     string  `json:"schedule"`      // "constant" or "poisson"
	RateTarget   float64 `json:"rate_target"`   // requested, operations per second
	RateAchieved float64 `json:"rate_achieved"` // measured operations / measured span
}

// PostingPauses are the gaps in a bandwidth sender's posting: the C loop
// returns to Go between batches (an interval boundary, a full sample
// buffer) and posts nothing until Go calls it again, while the send queue
// drains.
type PostingPauses struct {
	// SampleBufferFull counts the returns because the sample buffer was
	// full (the drainer had fallen a whole buffer behind); 0 normally.
	SampleBufferFull int64 `json:"sample_buffer_full"`
	// MaxNS is the longest time from one return of the loop to the next
	// call while operations were left to post, ns.
	MaxNS int64 `json:"max_ns"`
}

// Interval holds the figures of one reporting interval in duration mode.
// Its percentiles are of the same timed interval as Result.Latency.
type Interval struct {
	StartNS   int64     `json:"start_ns"` // relative to the start of the test
	EndNS     int64     `json:"end_ns"`   // relative to the start of the test
	Ops       int64     `json:"ops"`      // operations completed in the interval
	Bandwidth Bandwidth `json:"bandwidth"`
	P50       Nanos     `json:"p50_ns"`
	P99       Nanos     `json:"p99_ns"`
	// Counters are the port counters that moved during this interval, on
	// each side: each side reads them at the interval's boundaries (the
	// client where its loop closes the interval, outside the C loop; the
	// server when the client's mark of that boundary reaches it), so a
	// side's boundary lags the client's by up to the read and the mark's
	// trip. Nil when no side's counters could be read, in runs without
	// intervals' counters (older versions, TCP), and for the server's side
	// when the server is older.
	Counters *CounterDeltas `json:"counters,omitempty"`
}

// WriteJSONFile writes doc as indented JSON to path, or to stdout when path
// is "-". It writes path+".tmp" and renames it over path, so path never holds
// a partial document. A zero SchemaVersion or empty Tool is written as
// SchemaVersion and "rdmabench"; doc itself is not modified.
func WriteJSONFile(path string, doc *Document) error {
	d := *doc
	if d.SchemaVersion == 0 {
		d.SchemaVersion = SchemaVersion
	}
	if d.Tool == "" {
		d.Tool = "rdmabench"
	}
	if d.CommandLine == nil {
		d.CommandLine = []string{}
	}
	if d.Results == nil {
		d.Results = []Result{}
	}
	if d.envKeys == nil {
		return WriteJSON(path, &d)
	}
	// only the known environment fields
	b, err := json.Marshal(&d.Env)
	if err != nil {
		return fmt.Errorf("encode the result document: %w", err)
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("encode the result document: %w", err)
	}
	for k := range env {
		if !d.envKeys[k] {
			delete(env, k)
		}
	}
	type plain Document // Document's fields without its methods
	return WriteJSON(path, struct {
		*plain
		Env map[string]json.RawMessage `json:"environment"`
	}{(*plain)(&d), env})
}

// WriteJSON writes v as indented JSON to path, or to stdout when path is
// "-": through path+".tmp", synced and renamed over path, so path never
// holds a partial document.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the result document: %w", err)
	}
	b = append(b, '\n')
	if path == "-" {
		if _, err := os.Stdout.Write(b); err != nil {
			return fmt.Errorf("write the result document to stdout: %w", err)
		}
		return nil
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write the result document: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write the result document: %w", err)
	}
	return nil
}

// ClockCalibration is the calibration of a counter clock (tsc, cntvct)
// against CLOCK_MONOTONIC_RAW: once per process, over window_ns.
type ClockCalibration struct {
	TicksPerSecond float64 `json:"ticks_per_second"` // the counter's rate
	WindowNS       int64   `json:"window_ns"`        // the calibration's span, ns
	UncertaintyNS  float64 `json:"uncertainty_ns"`   // of each of its two readings, ns
	// DriftPPM is how far the counter clock ran from CLOCK_MONOTONIC_RAW
	// from the calibration to the end of the run, ppm (a check of the
	// rate; 0 when not measured).
	DriftPPM float64 `json:"drift_ppm"`
}

// HostName is the host's name as the tables show it: "" where the kernel
// had none to give ("(none)", as in a guest without a host name).
func (e *Env) HostName() string {
	if e.Host == "(none)" {
		return ""
	}
	return e.Host
}
