package endpoint

import (
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestMRModePoolConfig: the pool grants only the remote access the test
// needs, on each side.
func TestMRModePoolConfig(t *testing.T) {
	const ro = verbs.AccessRelaxedOrdering // requested by default (perftest's)
	for _, tt := range []struct {
		name   string
		s      spec.Spec
		client bool
		odp    bool
		access verbs.Access
		ops    verbs.ODPOps
		buf    int
	}{
		{"write bw client", spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 4096}, true, false, verbs.AccessLocalWrite | ro, 0, 8192},
		{"write bw server", spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 4096}, false, false, verbs.AccessLocalWrite | verbs.AccessRemoteWrite | ro, 0, 8192},
		{"write lat client", spec.Spec{Op: result.OpWrite, Mode: result.ModeLat, Size: 2}, true, false, verbs.AccessLocalWrite | verbs.AccessRemoteWrite | ro, 0, 8192},
		{"read server", spec.Spec{Op: result.OpRead, Mode: result.ModeBW, Size: 5000}, false, false, verbs.AccessLocalWrite | verbs.AccessRemoteRead | ro, 0, 16384},
		{"atomic server odp", spec.Spec{Op: result.OpFetchAdd, Mode: result.ModeLat, Size: 8}, false, true,
			verbs.AccessLocalWrite | verbs.AccessRemoteAtomic | verbs.AccessOnDemand | ro, verbs.ODPAtomic, 8192},
		{"send odp", spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2}, true, true, verbs.AccessLocalWrite | verbs.AccessOnDemand | ro, verbs.ODPSend | verbs.ODPRecv, 8192},
		{"write bw server without relaxed ordering", spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 4096, NoRelaxedOrdering: true}, false, false,
			verbs.AccessLocalWrite | verbs.AccessRemoteWrite, 0, 8192},
		{"ud send", spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 4096, QPType: result.QPTypeUD}, false, true, verbs.AccessLocalWrite | verbs.AccessOnDemand | ro, 0, 16384},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := PoolConfig(tt.s, tt.client, false, 3, tt.odp, true)
			if c.Access != tt.access || c.ODPOps != tt.ops || c.BufSize != tt.buf || c.Count != 3 || !c.HugePages {
				t.Fatalf("pool config %+v; want access %s, ODP ops %s, %d-byte buffers", c, tt.access, tt.ops, tt.buf)
			}
		})
	}
}
