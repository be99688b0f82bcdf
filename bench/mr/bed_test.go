package mr

import "github.com/rdmabench/rdmabench/internal/testutil/vmtest"

// Only the tests named RDMA need a device; under make test the others run on
// the host.
func init() { vmtest.GuestTests("RDMA") }
