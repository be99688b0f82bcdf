package main

import "github.com/rdmabench/rdmabench/internal/testutil/vmtest"

// These tests need no RDMA device although the test binary links rdma-core:
// make test runs them on the host (vmtest.Host).
func init() { vmtest.Layout(vmtest.Host) }
