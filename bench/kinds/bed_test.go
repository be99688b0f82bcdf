package kinds

import "github.com/rdmabench/rdmabench/internal/testutil/vmtest"

// No test here needs an RDMA device (the kinds' sequencing runs over
// ctrl.Pipe, the TCP baseline over loopback): make test runs them on the
// host, although the test binary links rdma-core.
func init() { vmtest.Layout(vmtest.Host) }
