package result

// Workload is where an RDMA test's operations landed and what each
// carried, when its workload knobs were set (--region, --access, --mrs,
// --sge; bench/spec/workload.go). Absent: one target buffer, one MR per
// side, one SGE per work request (perftest's).
type Workload struct {
	// RegionBytes is the target region the operations spread over, bytes
	// (--region; with --mrs alone, one message slot per MR), split into
	// MRs memory regions of MRBytes each; 0 when they do not spread.
	RegionBytes int64 `json:"region_bytes,omitempty"`
	MRBytes     int64 `json:"mr_bytes,omitempty"`
	// MRs is the memory regions the operations spread over, on the
	// target side (the region's) and on the initiator's (one message
	// buffer each, when above 1).
	MRs int `json:"mrs"`
	// Access is how each operation picked its offset: "seq", "random" or
	// "stride"; StrideBytes the stride's bytes; Seed the seed of the
	// random pattern (QP i drew from Seed + i); Slots the offsets each MR
	// holds.
	Access      string `json:"access,omitempty"`
	StrideBytes int64  `json:"stride_bytes,omitempty"`
	Seed        uint64 `json:"seed,omitempty"`
	Slots       int64  `json:"slots,omitempty"`
	// SGE is the scatter/gather entries of each work request (--sge).
	SGE int `json:"sge"`
	// IdleQPs is the connected RC QPs per side that carried nothing
	// beside the measured ones (--qps-idle).
	IdleQPs int `json:"idle_qps,omitempty"`
}
