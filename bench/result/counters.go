package result

import (
	"sort"
	"strings"
)

// CounterDeltas is what the RDMA ports counted during one test: each side's
// port counters (sysfs counters/ and hw_counters/), read before and after
// the test. A side is nil when its counters could not be read (no sysfs, or
// a server of an older rdmabench).
//
// Client and server each read their own port. When both ends share a port
// (loopback on one device) each side's deltas count both ends' traffic, so
// the two sides are not to be added up.
type CounterDeltas struct {
	Client *PortCounters `json:"client,omitempty"`
	Server *PortCounters `json:"server,omitempty"`
}

// PortCounters are one side's counter deltas over a test.
type PortCounters struct {
	Device string `json:"device"` // e.g. "rxe0"
	Port   int    `json:"port"`
	// Deltas maps each counter that moved to after − before, by file name
	// ("hw_counters/NAME" when counters/ has a file of the same name).
	// Counters that did not move are left out, so an absent counter is 0
	// (or one the device does not have); the map is empty, not absent, when
	// nothing moved.
	Deltas map[string]int64 `json:"deltas"`
	// Reset lists the counters that went down during the test (a reset or a
	// wrap-around): their delta is unknown and they are not in Deltas.
	Reset []string `json:"reset,omitempty"`
}

// Categories of port counters that signal trouble when they move
// (TroubleCounters).
const (
	TroubleRetransmissions = "retransmissions"   // retransmissions and ACK timeouts
	TroubleOutOfSequence   = "out_of_sequence"   // packets received out of sequence
	TroubleSequenceErrors  = "sequence_errors"   // sequence-error NAKs and implied NAKs
	TroubleRNR             = "rnr"               // receiver not ready: no receive WQE posted
	TroubleDuplicates      = "duplicates"        // duplicate requests received (the peer retransmitted)
	TroubleCongestion      = "congestion"        // ECN marks and CNPs
	TroubleLinkDowns       = "link_downs"        // the link went down or retrained
	TroubleReceiveErrors   = "receive_errors"    // packets received with errors or dropped
	TroubleTransmitErrors  = "transmit_errors"   // packets that could not be sent
	TroubleCompletionError = "completion_errors" // work completions in error
)

// TroubleCounters maps each port counter that signals trouble when it moves
// to its category: rxe (SoftRoCE), mlx5 (ConnectX) and the standard
// InfiniBand port counters (the PMA's, in counters/). Other counters, such
// as packet and byte counts, are not trouble. This is the one list the
// report and the gate (compare --max-counter) use.
var TroubleCounters = map[string]string{
	// rxe (drivers/infiniband/sw/rxe/rxe_hw_counters.c)
	"completer_retry_err":    TroubleRetransmissions,
	"retry_exceeded_err":     TroubleRetransmissions,
	"out_of_seq_request":     TroubleOutOfSequence,
	"rcvd_seq_err":           TroubleSequenceErrors,
	"rcvd_rnr_err":           TroubleRNR,
	"send_rnr_err":           TroubleRNR,
	"retry_rnr_exceeded_err": TroubleRNR,
	"duplicate_request":      TroubleDuplicates, // mlx5 too
	"send_err":               TroubleTransmitErrors,
	"link_downed":            TroubleLinkDowns, // the standard counter too

	// mlx5 (drivers/infiniband/hw/mlx5/counters.c)
	"local_ack_timeout_err":          TroubleRetransmissions,
	"req_transport_retries_exceeded": TroubleRetransmissions,
	"roce_adp_retrans":               TroubleRetransmissions,
	"roce_adp_retrans_to":            TroubleRetransmissions,
	"roce_slow_restart":              TroubleRetransmissions,
	"roce_slow_restart_trans":        TroubleRetransmissions,
	"out_of_sequence":                TroubleOutOfSequence,
	"packet_seq_err":                 TroubleSequenceErrors,
	"implied_nak_seq_err":            TroubleSequenceErrors,
	"rnr_nak_retry_err":              TroubleRNR,
	"req_rnr_retries_exceeded":       TroubleRNR,
	"out_of_buffer":                  TroubleRNR,
	"np_ecn_marked_roce_packets":     TroubleCongestion,
	"np_cnp_sent":                    TroubleCongestion,
	"rp_cnp_handled":                 TroubleCongestion,
	"rp_cnp_ignored":                 TroubleCongestion,
	"roce_slow_restart_cnps":         TroubleCongestion,
	"rx_icrc_encapsulated":           TroubleReceiveErrors,
	"req_cqe_error":                  TroubleCompletionError,
	"resp_cqe_error":                 TroubleCompletionError,
	"req_remote_invalid_request":     TroubleCompletionError,
	"req_remote_access_errors":       TroubleCompletionError,
	"resp_remote_access_errors":      TroubleCompletionError,
	"resp_local_length_error":        TroubleCompletionError,

	// InfiniBand port counters (counters/, from the PMA)
	"link_error_recovery":             TroubleLinkDowns,
	"symbol_error":                    TroubleReceiveErrors,
	"port_rcv_errors":                 TroubleReceiveErrors,
	"port_rcv_remote_physical_errors": TroubleReceiveErrors,
	"port_rcv_switch_relay_errors":    TroubleReceiveErrors,
	"port_rcv_constraint_errors":      TroubleReceiveErrors,
	"local_link_integrity_errors":     TroubleReceiveErrors,
	"excessive_buffer_overrun_errors": TroubleReceiveErrors,
	"VL15_dropped":                    TroubleReceiveErrors,
	"port_xmit_discards":              TroubleTransmitErrors,
	"port_xmit_constraint_errors":     TroubleTransmitErrors,
}

// HWCounterPrefix marks a hw_counters/ counter whose name counters/ has too.
const HWCounterPrefix = "hw_counters/"

// CounterCategory returns the trouble category of counter name (a key of
// PortCounters.Deltas), or "" when its moving is no trouble.
func CounterCategory(name string) string {
	return TroubleCounters[strings.TrimPrefix(name, HWCounterPrefix)]
}

// IsTroubleCategory reports whether name is a category of TroubleCounters.
func IsTroubleCategory(name string) bool {
	for _, c := range TroubleCounters {
		if c == name {
			return true
		}
	}
	return false
}

// TroubleCategories lists the categories of TroubleCounters, sorted.
func TroubleCategories() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range TroubleCounters {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}
