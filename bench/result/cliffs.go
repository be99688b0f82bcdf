package result

import (
	_ "embed"
	"time"
)

// The document of `rdmabench cliffs --json` (cliffs.schema.json): one test
// measured along one axis (QPs, message size, queue depth, outstanding
// reads) at the points of a geometric ladder and of the bisections where
// the figure fell, each point run several times; the knees found and the
// device counters that moved at each.

// CliffsSchemaVersion is the version of the cliffs document.
const CliffsSchemaVersion = 1

// KindCliffs is CliffsDocument.Kind.
const KindCliffs = "cliffs"

// Stages of a cliffs point.
const (
	StageLadder    = "ladder"    // a point of the geometric ladder (or of --points)
	StageBisection = "bisection" // a point between two ladder points where the figure fell
)

// CliffsDocument is the JSON document of `rdmabench cliffs --json`.
type CliffsDocument struct {
	SchemaVersion int       `json:"schema_version"` // CliffsSchemaVersion
	Kind          string    `json:"kind"`           // KindCliffs
	Tool          string    `json:"tool"`
	ToolVersion   string    `json:"tool_version"`
	CommandLine   []string  `json:"command_line"`
	Start         time.Time `json:"start_time"`
	End           time.Time `json:"end_time"`
	Role          string    `json:"role"` // "loopback" or "client"
	Peer          string    `json:"peer,omitempty"`
	Device        string    `json:"device"` // the client's device, e.g. "rxe0"
	// Test names the test measured at every point, its axis value left
	// out, e.g. "write bw 64B" for an axis of QPs.
	Test string `json:"test"`
	// Axis is the parameter searched: "qps", "size" (bytes), "tx_depth",
	// "outstanding_reads", "mrs", "region" (bytes), "sge" or "idle_qps".
	Axis string `json:"axis"`
	// Figure is the figure judged: "mpps", "bw_mb_per_s", or a latency
	// statistic ("p50", "p99", "mean", ...), in FigureUnit.
	Figure        string `json:"figure"`
	FigureUnit    string `json:"figure_unit"` // "Mpps", "MB/s" (10^6 B/s) or "ns"
	LowerIsBetter bool   `json:"lower_is_better"`
	// Ladder is the geometric ladder's points (or the --points list).
	Ladder []int `json:"ladder"`
	// Runs is the runs per point, each on fresh QPs; RunDurationNS the
	// measured time of each (0 with an iteration count).
	Runs          int   `json:"runs"`
	RunDurationNS int64 `json:"run_duration_ns"`
	// MaxBisections is the bisection steps allowed per fall, and
	// MaxPoints the points the search may measure in all.
	MaxBisections int `json:"max_bisections"`
	MaxPoints     int `json:"max_points"`
	// MinDrop is the relative worsening that is a knee (0.2: 20 %), and
	// Confidence the level of each drop's interval.
	MinDrop    float64 `json:"min_drop"`
	Confidence float64 `json:"confidence"`
	// EstimatedNS is the time the plan announced before the first point
	// (for MaxPoints points); ElapsedNS the time the search took.
	EstimatedNS int64 `json:"estimated_ns"`
	ElapsedNS   int64 `json:"elapsed_ns"`
	// Points are every measured point, in the order of the axis.
	Points []CliffsPoint `json:"points"`
	// Knees are the knees found, in the order of the axis; empty with
	// NoKneeUpTo set to the last point measured.
	Knees      []CliffsKnee `json:"knees"`
	NoKneeUpTo *int         `json:"no_knee_up_to,omitempty"`
	// Partial is true when the search stopped early (an error, a signal):
	// the knees are those of the points measured.
	Partial  bool     `json:"partial,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// CliffsPoint is one measured point of the axis.
type CliffsPoint struct {
	Value int    `json:"value"`
	Stage string `json:"stage"` // StageLadder or StageBisection
	// Runs is the figure of each run; Median, Min and Max summarise them.
	Runs   []float64 `json:"runs"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	// Iterations are the measured operations of every run together.
	Iterations int64 `json:"iterations"`
	// Counters are the port counters that moved during the first run,
	// each side's (counter name → delta), over CounterIterations
	// operations of that run; absent where they could not be read.
	Counters          *CliffsCounters `json:"counters,omitempty"`
	CounterIterations int64           `json:"counter_iterations,omitempty"`
}

// CliffsCounters are one run's counter deltas by side.
type CliffsCounters struct {
	Client map[string]int64 `json:"client,omitempty"`
	Server map[string]int64 `json:"server,omitempty"`
}

// CliffsKnee is one knee: the figure worsened by Drop between the points
// Before and After (neighbours once the bisection ended).
type CliffsKnee struct {
	Before       int     `json:"before"`
	After        int     `json:"after"`
	FigureBefore float64 `json:"figure_before"` // the median of the runs
	FigureAfter  float64 `json:"figure_after"`
	// Drop is the relative worsening: 1 − after/before for a rate, after/
	// before − 1 for a latency; DropCI its bootstrap interval at the
	// document's Confidence, absent with fewer than 2 runs a point.
	Drop   float64       `json:"drop"`
	DropCI *DropInterval `json:"drop_ci,omitempty"`
	// LadderBefore and LadderAfter are the ladder step where the fall was
	// first seen.
	LadderBefore int `json:"ladder_before"`
	LadderAfter  int `json:"ladder_after"`
	// Counters are the counters whose rate per operation moved across the
	// knee (trouble counters first).
	Counters []CliffsCounter `json:"counters"`
}

// DropInterval is the confidence interval of a drop.
type DropInterval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// CliffsCounter is one counter's rate per operation either side of a knee.
type CliffsCounter struct {
	Side        string  `json:"side"` // "client" or "server"
	Name        string  `json:"name"`
	PerOpBefore float64 `json:"per_op_before"`
	PerOpAfter  float64 `json:"per_op_after"`
	// Trouble is the counter's category in TroubleCounters, "" for others.
	Trouble string `json:"trouble,omitempty"`
}

// IsCliffsDocument reports whether data is a cliffs document (its kind).
func IsCliffsDocument(data []byte) bool {
	return isKind(data, KindCliffs)
}

// ReadCliffs decodes a cliffs document.
func ReadCliffs(data []byte) (*CliffsDocument, error) {
	d, err := readKind(data, KindCliffs, "cliffs document", func(d *CliffsDocument) string { return d.Kind })
	if err == nil {
		err = d.Check()
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// WriteCliffsJSON writes doc to path ("-": stdout).
func WriteCliffsJSON(path string, doc *CliffsDocument) error {
	d := *doc
	d.SchemaVersion, d.Kind = CliffsSchemaVersion, KindCliffs
	if d.Tool == "" {
		d.Tool = "rdmabench"
	}
	if d.CommandLine == nil {
		d.CommandLine = []string{}
	}
	if d.Points == nil {
		d.Points = []CliffsPoint{}
	}
	if d.Knees == nil {
		d.Knees = []CliffsKnee{}
	}
	if d.Ladder == nil {
		d.Ladder = []int{}
	}
	return WriteJSON(path, &d)
}

// CliffsSchemaJSON is cliffs.schema.json, as shipped; package
// result/schema validates against it.
//
//go:embed cliffs.schema.json
var CliffsSchemaJSON []byte
