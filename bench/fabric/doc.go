// Package fabric compares fabrics: it lines up result documents of RDMA
// fabrics (RoCE, iWARP, InfiniBand) and the kernel-TCP baseline, one column
// per fabric and one row per op, mode and message size, with each figure's
// ratio to TCP, flags on rows whose settings differ (RTT against RTT/2,
// inline, open loop, QP type, MR mode, QP count), text and Markdown tables,
// and a latency plot. It is what 'rdmabench report' prints. Pure Go.
package fabric
