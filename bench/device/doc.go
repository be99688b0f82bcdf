// Package device chooses the RDMA device, port and GID one side of a test
// uses (by route from the control connection's address, with --ib-dev, or
// the first active port) and holds what is known of it: its limits and the
// inline probe, NUMA placement and the --cpu plan, fatal async events, port
// counters, the environment of the result document, and `rdmabench
// devices`' report. It knows nothing of the server, the client or the test
// kinds (bench); those ask it.
package device
