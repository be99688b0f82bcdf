package perftest

import (
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// UC and UD against a real perftest tool (docs/perftest.md, "Facing
// perftest"; the QPs: bench/dropin/peer/peer.go). The exchange is the same as
// for RC (the same per-QP records, swaps and barriers); what differs is on
// the QPs. perftest 6.06 moves a UC QP to RTR with the path MTU, the peer's
// QPN and PSN only and to RTS with its send PSN only; a UD QP to RTR and
// RTS with no peer at all, every send naming an address handle built from
// the peer's record (its LID, and its GID whenever perftest has a GID
// index), the peer's QPN and perftest's fixed Q_Key. A UD receive buffer
// holds the 40-byte GRH before the payload, and a UD message is one packet:
// perftest cuts a larger size to the path MTU.

// QKey is the Q_Key of perftest's UD QPs (its DEF_QKEY), which every
// perftest UD send names: the drop-in's UD QPs take it too.
const QKey = 0x11111111

// PeerQPType is why the drop-in does not run s against a perftest tool
// with its QP type, or "": UC carries SEND and WRITE, UD SEND only (as
// perftest allows), and with -R only RC (RDMACMQPType). The ops with
// immediate data (--write_with_imm, --send_with_imm) run between two
// rdmabench ends only.
func PeerQPType(s spec.Spec) string {
	switch qt := s.QPTypeOrDefault(); {
	case s.Traits().Imm:
		return s.Op + " (--write_with_imm, --send_with_imm): with immediate data the drop-in needs rdmabench at both ends"
	case qt == result.QPTypeRC:
		return ""
	case qt != result.QPTypeUC && qt != result.QPTypeUD:
		return fmt.Sprintf("-c %s (RC, UC and UD)", s.QPTypeLabel())
	case s.RDMACM:
		return "-c " + s.QPTypeLabel() + " with -R: " + RDMACMQPType(s.QPTypeLabel())
	case !s.Traits().Carries(qt):
		return fmt.Sprintf("-c %s with %s (UC: SEND and WRITE; UD: SEND)", s.QPTypeLabel(), s.Op)
	}
	return ""
}

// QKeyFor is the Q_Key of s's QPs facing perftest: QKey for UD, 0 for RC
// and UC, which have none.
func QKeyFor(s spec.Spec) uint32 {
	if s.QPTypeOrDefault() == result.QPTypeUD {
		return QKey
	}
	return 0
}

// CutUDSize cuts a UD test's message size to the path MTU, as perftest
// 6.06 does once the MTU is agreed (its bandwidth tools' default 65536 B
// becomes the MTU); it returns the size before.
func CutUDSize(s *spec.Spec, mtu int) (was int) {
	was = s.Size
	if s.QPTypeOrDefault() == result.QPTypeUD && mtu > 0 && s.Size > mtu {
		s.Size = mtu
	}
	return was
}

// Lost explains a UC or UD loop's timeout (timedOut: err is one): UC and UD
// do not retransmit, so a message that found no receive posted, or that
// the device dropped, is gone, and what the loop waits for never arrives
// (perftest's own SEND bandwidth server gives up the same way, after 120 s
// without a message). Other errors, and RC, pass unchanged.
func Lost(s spec.Spec, timedOut bool, err error) error {
	if err == nil || !timedOut || s.QPTypeOrDefault() == result.QPTypeRC {
		return err
	}
	return fmt.Errorf("%w (-c %s does not retransmit: messages were lost; a smaller -n, or RC)", err, s.QPTypeLabel())
}

// LostAtClose explains a UC or UD SEND bandwidth client's timeout on the
// closing record: the perftest server still waits for messages that were
// lost. Servers, other tests, RC and other errors pass unchanged.
func LostAtClose(s spec.Spec, client, timedOut bool, err error) error {
	if err == nil || !client || !timedOut || s.Op != result.OpSend || s.Mode != result.ModeBW || s.QPTypeOrDefault() == result.QPTypeRC {
		return err
	}
	return fmt.Errorf("%w (the server has not received all %d messages: -c %s does not retransmit; a smaller -n, or RC)", err, s.Iters, s.QPTypeLabel())
}

// CloseRecord reports whether the drop-in swaps perftest's closing record
// after the loop. perftest 6.06's ib_write_lat has none (it exits after its
// table): over TCP its exit ends the drop-in's wait for that record, but
// over -R's rdma_cm channel nothing does, and the drop-in's closing swap
// timed out in the guest, both ways. So with -R ib_write_lat swaps none.
func CloseRecord(s spec.Spec, rdmaCM bool) bool {
	return !rdmaCM || s.Op != result.OpWrite || s.Mode != result.ModeLat
}

// RDMACMQPType is why the drop-in refuses QP type qt ("UC", "UD", as -c
// spells it) with -R, RC being the one it connects through rdma_cm. perftest
// 6.06 refuses UC with -R itself, on both ends, before anything is opened
// (exit 1; librdmacm connects RC through its TCP port space and UD through
// its UDP one, and has no UC). UD with -R perftest 6.06 does run (in the
// guest, perftest against perftest: ib_send_lat, ib_send_bw, ib_send_bw
// -b): its UD ids use rdma_cm's UDP port space, the client learns the
// server's QPN, Q_Key and address handle from its ESTABLISHED event (a SIDR
// reply), and for the latency tool and -b the client then sends one 4-byte
// SEND with immediate carrying its QPN, from which the server builds its
// address handle; sends then name rdma_cm's Q_Key, not perftest's QKey.
// The drop-in does not do that exchange yet (docs/perftest.md, "Facing
// perftest").
func RDMACMQPType(qt string) string {
	switch qt {
	case "UC":
		return `perftest refuses it too ("UC is not supported in librdmacm", perftest 6.06, both ends, exit 1); rdma_cm connects RC and UD QPs only: UC without -R`
	case "UD":
		return "rdmabench connects RC QPs only through rdma_cm; perftest 6.06 runs UD with -R (rdma_cm's UDP port space, the peer's QPN and Q_Key from the connection event), which the drop-in does not do yet: UD without -R, or RC with -R"
	}
	return "rdmabench connects RC QPs only through rdma_cm, not " + qt
}
