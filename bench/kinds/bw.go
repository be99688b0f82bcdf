package kinds

import (
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/verbs"
)

// bwKind is a bandwidth test on one QP: the client streams (measure.BW);
// the server receives SENDs in its responder loop, or (WRITE, READ,
// atomics) leaves it to its NIC.
type bwKind struct{}

func (bwKind) Measure(t *ClientTest) (Measured, error) {
	res, total, err := measure.BW(t.EPs.Probe, t.Spec, t.Opts)
	return Measured{Res: res, Total: total}, err
}

func (bwKind) Respond(t *ServerTest) error {
	return t.serveLoops(responders{active: t.Spec.Traits().ConsumesRecv, loop: (*verbs.Engine).BWServer})
}
