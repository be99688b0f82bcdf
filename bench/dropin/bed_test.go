package dropin

import "github.com/rdmabench/rdmabench/internal/testutil/vmtest"

// These tests (flag mapping, the listeners of one session, the refusals before
// any exchange) need no RDMA device, although the test binary links rdma-core:
// make test runs them on the host (vmtest.Host), where RDMABENCH_REQUIRE_RDMA=1
// would fail one that did. The drop-in against perftest runs in internal/e2e.
func init() { vmtest.Layout(vmtest.Host) }
