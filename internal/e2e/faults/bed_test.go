package faults

import "github.com/rdmabench/rdmabench/internal/testutil/vmtest"

// The suite's test binary links no rdma-core: it says where it runs.
func init() { vmtest.Layout(vmtest.One) }
