package endpoint

import (
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

func TestUsesSRQ(t *testing.T) {
	lat := spec.Spec{Op: result.OpSend, Mode: result.ModeLat, SRQ: true}
	bw := spec.Spec{Op: result.OpSend, Mode: result.ModeBW, SRQ: true}
	if !UsesSRQ(lat, true) || !UsesSRQ(lat, false) || UsesSRQ(bw, true) || !UsesSRQ(bw, false) || UsesSRQ(spec.Spec{}, false) {
		t.Error("an SRQ on every receiving side: both in latency, the server in bandwidth, none without --srq")
	}
}
