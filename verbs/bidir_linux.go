package verbs

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/cloop
#include "bidir.h"
*/
import "C"

import "fmt"

// BidirSend runs the bidirectional SEND loop (perftest -b) of a SEND engine
// (or one of an op that consumes receives: SEND or WRITE with immediate)
// in one C call: it streams SENDs as BWClient does, up to SetTarget's
// count, and in the same loop receives the peer's, re-posting a receive for
// each (Iterations counts them). A call that starts with sends to complete
// returns once they are complete; one that starts with none returns once
// the messages received reach SetStop's count. Either returns when the
// engine clock passes until (ns, see Now), or with full=true when the
// sample buffer is nearly full. Busy polling only (no Event).
func (g *Engine) BidirSend(until int64) (full bool, err error) {
	if !consumesRecv(g.cfg.Op) || g.cfg.Event {
		return false, fmt.Errorf("verbs: the bidirectional loop runs a SEND engine (or SEND or WRITE with immediate) without event mode (op %s, event %v)", g.cfg.Op, g.cfg.Event)
	}
	rc := C.rb_bidir_send(g.e, C.int64_t(until))
	if rc == C.RB_FULL {
		return true, nil
	}
	return false, g.err(rc, "bidirectional send")
}
