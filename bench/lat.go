package bench

import (
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/verbs"
)

// latKind is a latency test: the client's ping-pong or one operation at a
// time (measure.Lat, on the first measured QP); the server answers a
// ping-pong or receives, one responder loop per measured QP, or (READ,
// atomics) leaves it to its NIC.
type latKind struct{}

func (latKind) measure(t *clientTest) (measured, error) {
	ep := t.eps.Probe
	res, total, err := measure.Lat(ep.Eng, measure.BaseResult(t.spec, ep), t.spec, t.o)
	return measured{res: res, total: total}, err
}

func (latKind) respond(t *serverTest) error { return t.serveLoops(latResponders(t)) }

// latResponders are the server's loops of a latency test.
func latResponders(t *serverTest) responders {
	tr := t.spec.Traits()
	return responders{active: tr.ConsumesRecv || tr.PingPong, loop: (*verbs.Engine).LatServer}
}
