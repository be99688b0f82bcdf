package kinds

import (
	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/verbs"
)

// latKind is a latency test: the client's ping-pong or one operation at a
// time (measure.Lat, on the first measured QP); the server answers a
// ping-pong or receives, one responder loop per measured QP, or (READ,
// atomics) leaves it to its NIC.
type latKind struct{}

func (latKind) Measure(t *ClientTest) (Measured, error) {
	ep := t.EPs.Probe
	res, total, err := measure.Lat(ep.Eng, measure.BaseResult(t.Spec, ep), t.Spec, t.Opts)
	return Measured{Res: res, Total: total}, err
}

func (latKind) Respond(t *ServerTest) error { return t.serveLoops(latResponders(t)) }

// latResponders are the server's loops of a latency test.
func latResponders(t *ServerTest) responders {
	tr := t.Spec.Traits()
	return responders{active: tr.ConsumesRecv || tr.PingPong, loop: (*verbs.Engine).LatServer}
}
