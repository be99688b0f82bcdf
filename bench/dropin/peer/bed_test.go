package peer

import "github.com/rdmabench/rdmabench/internal/testutil/vmtest"

// Only the tests named RDMA need a device; under make test the rest run on
// the host (where RDMABENCH_REQUIRE_RDMA=1 fails an RDMA test named
// otherwise), not 6 to 10 times slower under the guest's emulation.
func init() { vmtest.GuestTests("RDMA") }
