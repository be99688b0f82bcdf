package server

import "github.com/rdmabench/rdmabench/internal/testutil/vmtest"

// No test here needs an RDMA device (the servers serve TCP tests only, the
// handshake and admission need no device): make test runs them on the
// host, although the test binary links rdma-core.
func init() { vmtest.Layout(vmtest.Host) }
