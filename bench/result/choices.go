package result

// Choices are what an RDMA test ran with where rdmabench differs from
// perftest only by an option: each defaults to perftest's behaviour
// (docs/defaults.md).
type Choices struct {
	// RelaxedOrdering: the registered memory asked for PCIe relaxed
	// ordering (IBV_ACCESS_RELAXED_ORDERING; off with
	// --disable-pcie-relaxed). The flag is optional: libibverbs and the
	// kernel drop it where the device or platform lacks it, and verbs
	// cannot tell whether it took effect, so this is what was requested.
	RelaxedOrdering bool `json:"relaxed_ordering"`
	// AddrStepBytes is how far each bandwidth work request's local and
	// remote addresses move past the previous one's, over a cycle buffer
	// of AddrCycleBytes (perftest's cache-line steps over a page); 0 when
	// every operation uses the same addresses (--no-addr-step, latency
	// tests, and messages above half the cycle).
	AddrStepBytes  int `json:"addr_step_bytes"`
	AddrCycleBytes int `json:"addr_cycle_bytes,omitempty"`
	// RecvAddrStepBytes is how far each receive of a SEND bandwidth test
	// lies past the previous one's over the receiver's cycle buffer (the
	// receive, with UD's 40-byte GRH, rounded up to the cache line, as
	// perftest steps its receive buffers); 0 or absent when receives use
	// one address (other ops, or whenever the sends do not step).
	//
	// It is the server's receives' step, as the server reported it: each
	// side rounds to its own CPU's cache line, so the client's may differ.
	// ClientRecvAddrStepBytes is the client's own receives' step in a
	// bidirectional SEND test (absent otherwise).
	RecvAddrStepBytes       int `json:"recv_addr_step_bytes,omitempty"`
	ClientRecvAddrStepBytes int `json:"client_recv_addr_step_bytes,omitempty"`
	// GRH: the client QP's address vector carries a Global Route Header
	// (always on RoCE; on InfiniBand only with --gid-index, as perftest -x).
	GRH bool `json:"grh"`
	// CompVectors are the completion vectors of the client's CQs, in the
	// order of its QPs (send CQ, receive CQ); CompVectorsOf the device's
	// count (num_comp_vectors).
	CompVectors   []int `json:"comp_vectors"`
	CompVectorsOf int   `json:"num_comp_vectors"`
	// PKeyIndex is the P_Key table index the QPs were given at INIT
	// (--pkey-index).
	PKeyIndex int `json:"pkey_index"`
}
