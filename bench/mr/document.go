package mr

import (
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
	"github.com/rdmabench/rdmabench/verbs"
)

// Document is the JSON document of `rdmabench mr`: the fields of Document
// (results stays empty) plus the "mr" section.
type Document struct {
	result.Document
	MR Report `json:"mr"`
}

// Report is the "mr" section of an Document.
type Report struct {
	Access        string        `json:"access"`           // access flags of every registration, e.g. "LOCAL_WRITE"
	ODP           bool          `json:"odp"`              // registrations use IBV_ACCESS_ON_DEMAND
	HugePages     bool          `json:"hugepages"`        // buffers come from huge pages
	ODPCaps       verbs.ODPCaps `json:"odp_caps"`         // the device's, from ibv_query_device_ex
	Iterations    int           `json:"iterations"`       // requested reg/dereg pairs per size
	TimePerSizeNS int64         `json:"time_per_size_ns"` // a size stops early after this long
	Registration  []RegResult   `json:"registration"`
	Skipped       []SkippedSize `json:"skipped,omitempty"`
	Ops           *Ops          `json:"ops,omitempty"`
}

// RegResult is the registration cost of one buffer size.
type RegResult struct {
	SizeBytes  int            `json:"size_bytes"`
	Iterations int            `json:"iterations"` // pairs measured; fewer than requested when the time ran out
	Reg        result.Latency `json:"reg_ns"`     // ibv_reg_mr
	Dereg      result.Latency `json:"dereg_ns"`   // ibv_dereg_mr
	// RegGBPerSec is size / reg p50 in 10^9 bytes/s: how fast memory can be
	// registered; 0 when p50 is n/a.
	RegGBPerSec float64 `json:"reg_gb_per_s"`
}

// SkippedSize is a size left out, with the limit that excluded it.
type SkippedSize struct {
	SizeBytes int    `json:"size_bytes"`
	Reason    string `json:"reason"`
}

// Ops compares RDMA WRITEs with a pooled MR against per-operation
// registration.
type Ops struct {
	Op         string   `json:"op"` // "write"
	SizeBytes  int      `json:"size_bytes"`
	Iterations int      `json:"iterations"`        // measured per mode
	Warmup     int      `json:"warmup_iterations"` // per mode, before measuring
	Pooled     OpResult `json:"pooled"`
	PerOp      OpResult `json:"per_op"`
	// Ratio is pooled ops/s over per-op ops/s: the throughput an MR cache
	// gains over registering per operation.
	Ratio float64 `json:"pooled_over_per_op"`
}

// OpResult is one registration mode of Ops.
type OpResult struct {
	Mode          string           `json:"mode"` // "pooled" or "per-op"
	TimedInterval string           `json:"timed_interval"`
	Latency       result.Latency   `json:"latency_ns"`
	DurationNS    int64            `json:"duration_ns"` // start of the first to the end of the last operation
	OpsPerSec     float64          `json:"ops_per_s"`
	Bandwidth     result.Bandwidth `json:"bandwidth"`
}

func newRegResult(size int, reg, dereg []uint64) RegResult {
	hr, hd := hist.New(), hist.New()
	hr.RecordSlice(reg, 0)
	hd.RecordSlice(dereg, 0)
	res := RegResult{SizeBytes: size, Iterations: len(reg), Reg: result.NewLatency(hr, 1), Dereg: result.NewLatency(hd, 1)}
	if res.Reg.P50.OK && res.Reg.P50.NS > 0 {
		res.RegGBPerSec = float64(size) / res.Reg.P50.NS // bytes per ns = 10^9 bytes/s
	}
	return res
}

// WriteJSONFile writes doc as indented JSON to path, or to stdout when
// path is "-", through a temporary file renamed over path.
func WriteJSONFile(path string, doc *Document) error { return result.WriteJSON(path, doc) }
