package result

import "github.com/rdmabench/rdmabench/hist"

// Connection setup methods (ConnSetup.Method).
const (
	ConnExchange = "exchange" // QP numbers and PSNs over the control connection
	ConnRDMACM   = "rdma_cm"
)

// ConnSetup is how a test's QPs were connected and how long each took: from
// the start of its creation (rdma_create_id with rdma_cm, ibv_create_qp
// otherwise) until it was in RTS on the client. With the exchange the time
// includes the one round trip of QP information on the control connection.
type ConnSetup struct {
	Method string `json:"method"` // "rdma_cm" or "exchange"
	// Address is the server's rdma_cm address and port.
	Address string `json:"address,omitempty"`
	// Device is the device the client's QPs were created on.
	Device string `json:"device,omitempty"`
	// GIDIndex, GID and GIDReason are the source GID the QPs use and why.
	GIDIndex  int    `json:"gid_index"`
	GID       string `json:"gid,omitempty"`
	GIDType   string `json:"gid_type,omitempty"`
	GIDReason string `json:"gid_reason,omitempty"`
	QPs       int    `json:"qps"`
	// SetupNS holds the per-QP setup times, ns, in QP order (measured QPs,
	// then load QPs); P50NS (null with fewer than 2 QPs) and MaxNS sum them up.
	SetupNS []int64    `json:"setup_ns"`
	P50NS   hist.Value `json:"setup_p50_ns"`
	MaxNS   int64      `json:"setup_max_ns"`
}

// QPResult is one measured QP of a multi-QP bandwidth test (Spec.QPs > 1).
type QPResult struct {
	QPN       uint32    `json:"qpn"`
	Thread    int       `json:"thread"` // the client thread that drove it, 0-based
	Ops       int64     `json:"ops"`    // measured operations
	Bandwidth Bandwidth `json:"bandwidth"`
	// Latency is the QP's completion latency (post to completion of each
	// signaled work request), ns.
	Latency Latency `json:"latency_ns"`
}
