// Package mr is the memory registration benchmark (`rdmabench mr`):
// ibv_reg_mr/ibv_dereg_mr cost per buffer size, and RDMA WRITE throughput
// from a pooled MR against per-operation registration, with its JSON
// document and text report.
package mr
