package bench

import (
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestEnvQPType: the environment names each QP type of a run's RDMA tests
// once, TCP tests none.
func TestEnvQPType(t *testing.T) {
	if got := envQPType([]spec.Spec{{}, {QPType: result.QPTypeUD}, {Transport: result.TransportTCP}}); got != "RC,UD" {
		t.Errorf("envQPType = %q", got)
	}
}
