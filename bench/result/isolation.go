package result

import (
	_ "embed"
	"time"
)

// The document of `rdmabench isolation --json` (isolation.schema.json): a
// victim latency test measured alone and beside each attacker of a
// catalogue on the same device and port, repeated in rounds (alone, then
// each attacker), the victim's percentiles and bandwidth as ratios
// attacked/alone with intervals, each attacker's own achieved rate, and
// the verdict of the --max-inflation bounds.

// IsolationSchemaVersion is the version of the isolation document.
const IsolationSchemaVersion = 1

// KindIsolation is IsolationDocument.Kind.
const KindIsolation = "isolation"

// The figures of an isolation ratio.
const (
	FigureBandwidth = "bandwidth" // the victim's message rate (its MB/s moves with it)
)

// IsolationFigures are the figures every attacker's ratios cover, in order:
// the victim's percentiles (ns, attacked/alone: above 1 is worse), then its
// bandwidth (attacked/alone: below 1 is worse).
var IsolationFigures = []string{"p50", "p90", "p99", "p99.9", "p99.99", FigureBandwidth}

// How an isolation interval was found.
const (
	// IntervalRuns: the percentile bootstrap of median(attacked)/
	// median(alone) over the runs (2 or more of each).
	IntervalRuns = "bootstrap_runs"
	// IntervalOrderStat: one run each; the ratio of the percentiles'
	// distribution-free intervals (attacked low/alone high .. attacked
	// high/alone low), which leaves run-to-run noise out.
	IntervalOrderStat = "order_statistics"
)

// IsolationDocument is the JSON document of `rdmabench isolation --json`.
type IsolationDocument struct {
	SchemaVersion int       `json:"schema_version"` // IsolationSchemaVersion
	Kind          string    `json:"kind"`           // KindIsolation
	Tool          string    `json:"tool"`
	ToolVersion   string    `json:"tool_version"`
	CommandLine   []string  `json:"command_line"`
	Start         time.Time `json:"start_time"`
	End           time.Time `json:"end_time"`
	Role          string    `json:"role"` // "loopback" or "client"
	Peer          string    `json:"peer,omitempty"`
	Device        string    `json:"device"` // the client's device, e.g. "rxe0"
	// Victim names the victim test ("send lat 2B") and VictimInterval says
	// what one of its samples timed.
	Victim         string `json:"victim"`
	VictimInterval string `json:"victim_interval"`
	// Repeat is the rounds: each runs the victim alone, then beside each
	// attacker in turn, every run on fresh QPs. RunDurationNS is the
	// measured time of each run (0 with an iteration count).
	Repeat        int   `json:"repeat"`
	RunDurationNS int64 `json:"run_duration_ns"`
	// Confidence is the level of every interval.
	Confidence float64 `json:"confidence"`
	// EstimatedNS is the time the plan announced; ElapsedNS the time taken.
	EstimatedNS int64 `json:"estimated_ns"`
	ElapsedNS   int64 `json:"elapsed_ns"`
	// Alone are the victim's runs alone, one per round.
	Alone []IsolationRun `json:"alone"`
	// Attackers are the attackers, in the order they ran each round.
	Attackers []IsolationAttacker `json:"attackers"`
	// Bounds are the --max-inflation bounds and Verdicts their outcome for
	// every attacker (absent without --max-inflation).
	Bounds   []InflationBound   `json:"bounds,omitempty"`
	Verdicts []InflationVerdict `json:"verdicts,omitempty"`
	// Partial is true when the rounds stopped early (an error, a signal).
	Partial  bool     `json:"partial,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// IsolationRun is one run of the victim: its percentiles (null where too
// few samples back them) and its bandwidth.
type IsolationRun struct {
	Round      int     `json:"round"` // 1-based
	Iterations int64   `json:"iterations"`
	P50        Nanos   `json:"p50"`
	P90        Nanos   `json:"p90"`
	P99        Nanos   `json:"p99"`
	P99_9      Nanos   `json:"p99_9"`
	P99_99     Nanos   `json:"p99_99"`
	Max        float64 `json:"max"`
	Mpps       float64 `json:"mpps"`
	MBPerSec   float64 `json:"mb_per_s"`
	// Quantiles are the percentiles with their distribution-free intervals.
	Quantiles []Quantile `json:"quantiles,omitempty"`
}

// IsolationAttacker is one attacker of the catalogue: what it is, the
// victim's runs beside it, its own achieved rate in each, and the ratios.
type IsolationAttacker struct {
	Name        string `json:"name"`  // e.g. "bw-hog"
	Class       string `json:"class"` // Husky's class, e.g. "bandwidth hog"
	Description string `json:"description"`
	// Load is the attacker's traffic, as the test's load carried it.
	Load IsolationLoad  `json:"load"`
	Runs []IsolationRun `json:"runs"`
	// Achieved is the attacker's own rate in each run (the load's result),
	// AchievedMedian their medians.
	Achieved       []AttackerRate `json:"achieved"`
	AchievedMedian AttackerRate   `json:"achieved_median"`
	// Ratios are attacked/alone for every figure of IsolationFigures.
	Ratios []InflationRatio `json:"ratios"`
}

// IsolationLoad is an attacker's load: its QPs (0 for registration churn
// alone), op and sizes, threads, and the churn's buffer size.
type IsolationLoad struct {
	QPs            int    `json:"qps"`
	Op             string `json:"op"`
	SizeBytes      int    `json:"size_bytes"`
	AltSizeBytes   int    `json:"alt_size_bytes,omitempty"`
	TxDepth        int    `json:"tx_depth"`
	Threads        int    `json:"threads"` // the threads driving the QPs (0 with none)
	RNR            bool   `json:"rnr,omitempty"`
	ChurnSizeBytes int    `json:"churn_size_bytes,omitempty"`
	MRs            int    `json:"mrs,omitempty"` // the MRs each side's load operations spread over (mr-thrash)
}

// AttackerRate is what an attacker achieved in one run: its operations'
// rate and data rate on its QPs, and its registrations per second.
type AttackerRate struct {
	Mpps                float64 `json:"mpps"`
	MBPerSec            float64 `json:"mb_per_s"`
	RegistrationsPerSec float64 `json:"registrations_per_sec,omitempty"`
}

// InflationRatio is one figure's ratio attacked/alone: the medians over
// the runs, their ratio and its interval (all null where a side has no
// backed value: a percentile n/a in every run).
type InflationRatio struct {
	Figure   string   `json:"figure"` // an entry of IsolationFigures
	Alone    *float64 `json:"alone"`  // ns, or Mpps for bandwidth
	Attacked *float64 `json:"attacked"`
	Ratio    *float64 `json:"ratio"`
	Low      *float64 `json:"low"`
	High     *float64 `json:"high"`
	// Method is IntervalRuns or IntervalOrderStat; "" without an interval.
	Method string `json:"method"`
	// Runs counts the runs each side had a backed value in.
	AloneRuns    int `json:"alone_runs"`
	AttackedRuns int `json:"attacked_runs"`
}

// InflationBound is one --max-inflation bound: figure's ratio at most Max.
type InflationBound struct {
	Figure string  `json:"figure"`
	Max    float64 `json:"max"`
}

// Outcomes of a bound for one attacker.
const (
	VerdictPass    = "pass"    // the interval's lower end is at most the bound
	VerdictCrossed = "crossed" // the interval's lower end lies above the bound
	VerdictUnknown = "n/a"     // no interval: the figure is n/a, or too few runs
)

// InflationVerdict is one bound judged for one attacker.
type InflationVerdict struct {
	Attacker string   `json:"attacker"`
	Figure   string   `json:"figure"`
	Max      float64  `json:"max"`
	Ratio    *float64 `json:"ratio"`
	Low      *float64 `json:"low"`
	High     *float64 `json:"high"`
	Verdict  string   `json:"verdict"`
}

// IsIsolationDocument reports whether data is an isolation document (its kind).
func IsIsolationDocument(data []byte) bool {
	return isKind(data, KindIsolation)
}

// ReadIsolation decodes an isolation document.
func ReadIsolation(data []byte) (*IsolationDocument, error) {
	d, err := readKind(data, KindIsolation, "isolation document", func(d *IsolationDocument) string { return d.Kind })
	if err == nil {
		err = d.Check()
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// WriteIsolationJSON writes doc to path ("-": stdout).
func WriteIsolationJSON(path string, doc *IsolationDocument) error {
	d := *doc
	d.SchemaVersion, d.Kind = IsolationSchemaVersion, KindIsolation
	if d.Tool == "" {
		d.Tool = "rdmabench"
	}
	if d.CommandLine == nil {
		d.CommandLine = []string{}
	}
	if d.Alone == nil {
		d.Alone = []IsolationRun{}
	}
	d.Attackers = append([]IsolationAttacker{}, d.Attackers...)
	for i := range d.Attackers {
		a := &d.Attackers[i]
		if a.Runs == nil {
			a.Runs = []IsolationRun{}
		}
		if a.Achieved == nil {
			a.Achieved = []AttackerRate{}
		}
		if a.Ratios == nil {
			a.Ratios = []InflationRatio{}
		}
	}
	return WriteJSON(path, &d)
}

// IsolationSchemaJSON is isolation.schema.json, as shipped; package
// result/schema validates against it.
//
//go:embed isolation.schema.json
var IsolationSchemaJSON []byte
