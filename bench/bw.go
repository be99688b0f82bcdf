package bench

import (
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/verbs"
)

// bwKind is a bandwidth test on one QP: the client streams (measure.BW);
// the server receives SENDs in its responder loop, or (WRITE, READ,
// atomics) leaves it to its NIC.
type bwKind struct{}

func (bwKind) measure(t *clientTest) (measured, error) {
	res, total, err := measure.BW(t.eps.Probe, t.spec, t.o)
	return measured{res: res, total: total}, err
}

func (bwKind) respond(t *serverTest) error {
	return t.serveLoops(responders{active: t.spec.Traits().ConsumesRecv, loop: (*verbs.Engine).BWServer})
}
