package proto

import "encoding/json"

// Payloads of the control protocol (JSON inside proto.go's frames).

// Hello opens a session (client to server).
type Hello struct {
	Version int    `json:"version"`
	Tool    string `json:"tool"`
	Host    string `json:"host"`
	// Auth is the authentication the client offers: AuthHMAC when it has a
	// key, "" when it has none.
	Auth string `json:"auth,omitempty"`
	// Nonce is the client's fresh random nonce (NonceLen bytes) when Auth is
	// set.
	Nonce []byte `json:"nonce,omitempty"`
}

// AuthHMAC names the challenge-response over a shared key: HMAC-SHA256 of
// a domain-separation label and both nonces (the key never travels).
const AuthHMAC = "hmac-sha256"

// NonceLen is the length of each side's nonce, bytes.
const NonceLen = 32

// MACLen is the length of an HMAC-SHA256 proof, bytes.
const MACLen = 32

// Challenge is a keyed server's answer to Hello: its own nonce. The client
// answers with Auth.
type Challenge struct {
	Auth  string `json:"auth"`  // AuthHMAC
	Nonce []byte `json:"nonce"` // NonceLen bytes
}

// Auth is the client's proof that it holds the key (after Challenge).
type Auth struct {
	MAC []byte `json:"mac"` // MACLen bytes
}

// HelloAck answers Hello (or, with a key, Auth) with the server's device.
type HelloAck struct {
	Version int    `json:"version"`
	Host    string `json:"host"`
	Device  string `json:"device"`
	// Env is the server's environment for this session (a result.Env).
	Env json.RawMessage `json:"env,omitempty"`
	// Proof is the server's proof that it holds the key too (MACLen bytes),
	// when the session is authenticated.
	Proof []byte `json:"proof,omitempty"`
	// IntervalCounters says the server reads its port counters at the
	// client's interval marks (Ready{PhaseMark}) and returns them in
	// ServerResult.IntervalCounters; older servers leave it out, and a
	// client sends them no marks.
	IntervalCounters bool `json:"interval_counters,omitempty"`
}

// QPInfo is what a peer needs to reach a QP and its target buffer.
type QPInfo struct {
	Device      string `json:"device,omitempty"` // the sender's RDMA device, for messages
	QPN         uint32 `json:"qpn"`
	PSN         uint32 `json:"psn"`
	LID         uint16 `json:"lid"`
	GID         string `json:"gid"`
	GIDIndex    int    `json:"gid_index"`
	GIDType     string `json:"gid_type"`
	LinkLayer   string `json:"link_layer"`
	ActiveMTU   int    `json:"active_mtu"`
	MaxRdAtomic int    `json:"max_rd_atomic"` // READ/atomic responder resources this side grants
	RKey        uint32 `json:"rkey"`
	Addr        uint64 `json:"addr"` // target area
	Len         uint64 `json:"len"`  // target area length, bytes
	// QKey is the Q_Key of a UD QP: the peer sends with it.
	QKey uint32 `json:"qkey,omitempty"`
	// Load holds the load QPs of a latency-under-load test, in order.
	Load []QPInfo `json:"load,omitempty"`
	// QPs holds the measured QPs after the first (this one) of a multi-QP
	// bandwidth test (Spec.QPs), in order.
	QPs []QPInfo `json:"qps,omitempty"`
	// TCPPort is the server's data port of a TCP test (Spec.Transport "tcp"),
	// on its control connection's local address; the RDMA fields are zero.
	TCPPort int `json:"tcp_port,omitempty"`
	// CMAddr and CMPort are where the server listens for the rdma_cm
	// connections of an rdma_cm test (Spec.RDMACM); QPN and PSN are then 0.
	CMAddr string `json:"cm_addr,omitempty"`
	CMPort int    `json:"cm_port,omitempty"`
	// CMToken is the test's random token (CMTokenLen bytes): the server's
	// rdma_cm listener accepts only connection requests that carry it.
	CMToken []byte `json:"cm_token,omitempty"`
	// RecvStep is how far each of this side's receives lies past the
	// previous one's (SEND bandwidth: the receive rounded up to this
	// side's own cache line), bytes; 0: one address, or a peer that does
	// not say.
	RecvStep int `json:"recv_step,omitempty"`
	// Region is the target side's spread region of a test with the
	// workload knobs (--region, --mrs), its MRs in order.
	Region []MRInfo `json:"region,omitempty"`
	// LoadRegion is the target side's MRs of a load that spreads
	// (spec.Load.MRs, the mr-thrash attacker), in order.
	LoadRegion []MRInfo `json:"load_region,omitempty"`
	// Idle holds the idle QPs of a test with --qps-idle, in order.
	Idle []QPInfo `json:"idle,omitempty"`
}

// MRInfo is one memory region a peer may reach: its start, length
// (bytes) and rkey.
type MRInfo struct {
	Addr uint64 `json:"addr"`
	Len  uint64 `json:"len"`
	RKey uint32 `json:"rkey"`
}

// CMTokenLen is the length of an rdma_cm test's token, bytes.
const CMTokenLen = 16

// Phases of Ready messages.
const (
	PhaseStart = "start" // server: my side is connected and running
	PhaseAlive = "alive" // both sides: heartbeat while the test runs (server: from its start to its result)
	PhaseEnd   = "end"   // client: done; Total is the iteration count including warm-up

	// The barrier of a bidirectional test (Spec.Bidirectional), where both
	// sides post: after the server's start, the client says warmup and both
	// warm up; the server says warm when its warm-up is done; once both are,
	// the client says measure and both measure from then on.
	PhaseWarmup  = "warmup"  // client: my QP is ready; warm up now
	PhaseWarm    = "warm"    // server: my warm-up is done
	PhaseMeasure = "measure" // client: measuring starts now

	// PhaseMark (client, to servers whose HelloAck has IntervalCounters):
	// a boundary of the test's reporting intervals, Ready.Mark its number
	// (0: the start of the measured span; N: the end of interval N). The
	// server reads its port counters when it arrives.
	PhaseMark = "mark"
)

// MaxIntervalMarks bounds the marks a server keeps per test; later marks
// are ignored (their intervals have no server counters).
const MaxIntervalMarks = 4096

// Ready is the barrier and heartbeat message.
type Ready struct {
	Phase string `json:"phase"`
	Total int64  `json:"total,omitempty"`
	// Totals is Total per measured QP of a multi-QP test, in QP order.
	Totals []int64 `json:"totals,omitempty"`
	// Mark is the boundary's number of a PhaseMark.
	Mark int `json:"mark,omitempty"`
}

// Bye ends a session (client -> server). Report, when set, is an opaque
// document for the server's OnBye (the perftest drop-in's results, so that
// its server prints perftest's table too); an empty bye has no payload.
type Bye struct {
	Report json.RawMessage `json:"report,omitempty"`
}

// ServerResult is what the server reports after a test.
type ServerResult struct {
	Iterations int64  `json:"iterations"` // iterations answered or messages received
	Error      string `json:"error,omitempty"`
	// CPU time of the server's engine thread during the test, ns.
	CPUUserNS int64 `json:"cpu_user_ns,omitempty"`
	CPUSysNS  int64 `json:"cpu_sys_ns,omitempty"`
	// Counters are the server's port counters that moved during the test;
	// nil when it could not read them.
	Counters *PortCounters `json:"counters,omitempty"`
	// Bidir is the server's own operations in a bidirectional test: what
	// it posted towards the client while the client posted towards it.
	Bidir *Direction `json:"bidirectional,omitempty"`
	// IntervalCounters are the server's port counters that moved between
	// the client's marks: element i between mark i and mark i+1 (a nil
	// element: the server could not read them then). Absent when the
	// client sent no marks, or the series would not fit in the message.
	IntervalCounters []*PortCounters `json:"interval_counters,omitempty"`
}

// PortCounters are one port's counter deltas over a test (result.PortCounters).
type PortCounters struct {
	Device string           `json:"device"`
	Port   int              `json:"port"`
	Deltas map[string]int64 `json:"deltas"` // after − before of the counters that moved
	Reset  []string         `json:"reset,omitempty"`
}

// Direction is what one side's own operations did in a bidirectional test.
type Direction struct {
	Ops        int64 `json:"ops"`         // measured operations, all complete
	Warmup     int64 `json:"warmup"`      // operations completed before measuring
	DurationNS int64 `json:"duration_ns"` // first post to last completion of the measured operations
}

// Verify is one step of a test's --verify pass, after the server's
// result. The client sends it for message Message on measured QP QP (in
// QP order): for SEND and WRITE once the message is delivered, for READ
// before reading it. The server answers with the same numbers once it
// checked the message (SEND, WRITE) or filled its buffer with it (READ).
// After the last message the client sends Message = the count, QP 0, and
// expects no answer: the pass is over.
type Verify struct {
	QP      int `json:"qp"`
	Message int `json:"message"`
	// Mismatch, in the server's answer, says the message differed from its
	// pattern; absent when it matched (and in READ answers).
	Mismatch *Mismatch `json:"mismatch,omitempty"`
}

// Mismatch is a message that failed its check: the first byte that
// differs from the pattern, or a length other than the message size.
type Mismatch struct {
	Offset   int   `json:"offset"` // bytes into the message
	Expected uint8 `json:"expected"`
	Seen     uint8 `json:"seen"`
	Len      int   `json:"len"` // bytes that arrived
	// Imm, when set, is a message with immediate data (SEND or WRITE
	// with immediate) whose receive completion did not carry message k's
	// immediate; the payload's fields are then zero.
	Imm *ImmMismatch `json:"imm,omitempty"`
}

// ImmMismatch is the receive completion of a message with immediate data
// that differs from what was sent: what it carried.
type ImmMismatch struct {
	Expected uint32 `json:"expected"` // the immediate sent, host order
	Seen     uint32 `json:"seen"`     // the completion's (0 without one)
	// Opcode is the completion's as verbs names the peer's operation
	// ("RDMA_WRITE_WITH_IMM", "SEND_WITH_IMM"; "SEND": no immediate).
	Opcode string `json:"opcode"`
}

// Doctor is the server's answer to a doctor request (MsgDoctor, sent
// after the handshake, between tests): `rdmabench doctor`'s facts and
// checks of the server's host for the device and port of this session.
type Doctor struct {
	Host     json.RawMessage `json:"host"`     // a result.DoctorHost
	Findings json.RawMessage `json:"findings"` // a []result.DoctorFinding
	// Ports are every port of the server's host in rail order (a
	// []result.DoctorPort), only when the request asked for them
	// (DoctorRequest.Ports): an older client refuses a member it does not
	// know.
	Ports json.RawMessage `json:"ports,omitempty"`
}

// DoctorRequest is the payload of a client's doctor request (MsgDoctor).
// Older clients send no payload, and older servers ignore it (and answer
// without Ports).
type DoctorRequest struct {
	// Ports asks for the checks of every port of the server's host
	// (Doctor.Ports), for `doctor HOST` to compare rail by rail.
	Ports bool `json:"ports,omitempty"`
}
