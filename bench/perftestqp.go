package bench

import (
	"errors"
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/verbs"
)

// UC and UD against a perftest tool (docs/perftest.md, "Facing perftest"):
// the exchange is the same as for RC (the same per-QP records, swaps and
// barriers); what differs is on the QPs. perftest 6.06 moves a UC QP to RTR
// with the path MTU, the peer's QPN and PSN only and to RTS with its send
// PSN only; a UD QP to RTR and RTS with no peer at all, every send naming
// an address handle built from the peer's record (its LID, and its GID
// whenever perftest has a GID index), the peer's QPN and perftest's fixed
// Q_Key. A UD receive buffer holds the 40-byte GRH before the payload, and
// a UD message is one packet: perftest cuts a larger size to the path MTU.

// perftestQKey is the Q_Key of perftest's UD QPs (its DEF_QKEY), which it
// also names in every UD send: the drop-in's UD QPs take it too.
const perftestQKey = verbs.DefaultQKey

// perftestQPType refuses the QP types the drop-in does not run against
// perftest: UC carries SEND and WRITE, UD SEND only (as perftest allows),
// and with -R only RC (perftest 6.06 connects UD through rdma_cm's UDP port
// space, which the drop-in does not speak).
func perftestQPType(s Spec) error {
	switch qt := s.QPTypeOrDefault(); {
	case qt == result.QPTypeRC:
		return nil
	case qt != result.QPTypeUC && qt != result.QPTypeUD:
		return fmt.Errorf("%w: -c %s (RC, UC and UD)", ErrPerftestUnsupported, s.QPTypeLabel())
	case s.RDMACM:
		return fmt.Errorf("%w: -c %s with -R (rdma_cm QPs: RC only; UC and UD without -R)", ErrPerftestUnsupported, s.QPTypeLabel())
	case !s.Traits().Carries(qt):
		return fmt.Errorf("%w: -c %s with %s (UC: SEND and WRITE; UD: SEND)", ErrPerftestUnsupported, s.QPTypeLabel(), s.Op)
	}
	return nil
}

// perftestUDSize cuts a UD test's message size to the path MTU, as
// perftest 6.06 does once the MTU is agreed (its bandwidth tools' default
// 65536 B becomes the MTU); it returns the size before.
func perftestUDSize(s *Spec, mtu int) (was int) {
	was = s.Size
	if s.QPTypeOrDefault() == result.QPTypeUD && mtu > 0 && s.Size > mtu {
		s.Size = mtu
	}
	return was
}

// setPerftestQKey gives a UD test's QPs perftest's Q_Key before they
// leave RESET (endpoint.connect moves them to INIT with it).
func setPerftestQKey(s Spec, eps []*endpoint) {
	if s.QPTypeOrDefault() != result.QPTypeUD {
		return
	}
	for _, e := range eps {
		e.qkey = perftestQKey
	}
}

// peerQKey is the Q_Key the drop-in's UD sends name: perftest's; 0 for RC
// and UC, which have none.
func peerQKey(s Spec) uint32 {
	if s.QPTypeOrDefault() == result.QPTypeUD {
		return perftestQKey
	}
	return 0
}

// perftestLost explains a SEND receiver's timeout on UC and UD, which do
// not retransmit: a message that found no receive posted, or that the
// software device dropped, is gone, and the count the receiver waits for
// never arrives (perftest's own server gives up the same way, after 120 s
// without a message).
func perftestLost(s Spec, err error) error {
	if err == nil || s.QPTypeOrDefault() == result.QPTypeRC || !errors.Is(err, verbs.ErrTimeout) {
		return err
	}
	return fmt.Errorf("%w (-c %s does not retransmit: messages were lost; a smaller -n, or RC)", err, s.QPTypeLabel())
}

// perftestLostAtClose explains a UC or UD SEND bandwidth client's timeout
// on the closing record: the perftest server is still waiting for messages
// that were lost (its own watchdog ends it after 120 s without one).
func perftestLostAtClose(s Spec, client bool, err error) error {
	if err == nil || !client || s.Op != result.OpSend || s.Mode != result.ModeBW || s.QPTypeOrDefault() == result.QPTypeRC || !isTimeout(err) {
		return err
	}
	return fmt.Errorf("%w (the server has not received all %d messages: -c %s does not retransmit; a smaller -n, or RC)", err, s.Iters, s.QPTypeLabel())
}
