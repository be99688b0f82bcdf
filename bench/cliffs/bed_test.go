package cliffs

import "github.com/rdmabench/rdmabench/internal/testutil/vmtest"

// These tests search over a fake runner and need no RDMA device, although the
// test binary links rdma-core: make test runs them on the host (vmtest.Host).
// The planted cliff on rxe (cliffs_rdma_test.go, build tag experiment) runs in
// make cliffs-test.
func init() { vmtest.Layout(vmtest.Host) }
