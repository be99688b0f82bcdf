package perftest

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Report is what the drop-in client hands its server at the end of the
// session (in the control protocol's bye), so that the server prints
// perftest's table too, as perftest's server does: the client's results and
// both sides' environments. rdmabench's server does not time the data
// path; its table shows the client's figures, which is what perftest's
// bandwidth servers print as well (they receive the client's report).
type Report struct {
	Results   []result.Result `json:"results"`
	Env       result.Env      `json:"environment"`
	ServerEnv *result.Env     `json:"server_environment,omitempty"`
	// Error is the client's failure, when the run ended early ("" if not).
	Error string `json:"error,omitempty"`
}

// NewReport is the report of doc and the run's error err (nil: none),
// with the histograms left out unless keepHist (-H needs them) and the
// whole at most limit bytes encoded: when it would be larger, the
// histograms go, then the results (the error stays).
func NewReport(doc *result.Document, runErr error, keepHist bool, limit int) ([]byte, error) {
	rep := Report{Env: doc.Env, ServerEnv: doc.ServerEnv}
	if runErr != nil {
		rep.Error = runErr.Error()
	}
	rep.Results = append(rep.Results, doc.Results...)
	for i, r := range rep.Results { // the server's table needs them without the histogram
		if r.Mode == "lat" && r.Histogram != "" {
			if p99, p999, err := tailPercentiles(r); err == nil {
				rep.Results[i].Latency.P99, rep.Results[i].Latency.P99_9 = result.Nanos{NS: p99, OK: true}, result.Nanos{NS: p999, OK: true}
			}
		}
	}
	if !keepHist {
		stripHist(rep.Results)
	}
	for try := 0; ; try++ {
		b, err := json.Marshal(rep)
		if err != nil || len(b) <= limit {
			return b, err
		}
		switch try {
		case 0:
			stripHist(rep.Results)
		case 1:
			rep.Results = nil
			rep.Error = fmt.Sprintf("the results (%d bytes) exceed the control message limit", len(b))
		default:
			return nil, fmt.Errorf("report of %d bytes exceeds %d", len(b), limit)
		}
	}
}

// stripHist drops the encoded histograms (but keeps every figure), and
// what the table does not need.
func stripHist(rs []result.Result) {
	for i := range rs {
		rs[i].Histogram = ""
		rs[i].Intervals = slimIntervals(rs[i].Intervals)
	}
}

func slimIntervals(iv []result.Interval) []result.Interval {
	out := make([]result.Interval, len(iv))
	for i, v := range iv {
		out[i] = result.Interval{StartNS: v.StartNS, EndNS: v.EndNS, Ops: v.Ops, Bandwidth: v.Bandwidth}
	}
	return out
}

// DecodeReport reads a Report sent by a peer (network bytes: bounded by the
// control protocol's frame limit before they reach here).
func DecodeReport(b []byte) (Report, error) {
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return Report{}, fmt.Errorf("client report: %w", err)
	}
	if len(rep.Results) > maxReportResults {
		return Report{}, errors.New("client report: too many results")
	}
	return rep, nil
}

// maxReportResults bounds a report's results: -a has 23 sizes.
const maxReportResults = 256
