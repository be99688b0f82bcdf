// Package hostenv captures where a run took place, as far as the host
// tells without RDMA: the kernel, CPU model, clock source and resolution,
// the rdma-core version (host.go), and the checks that warn about a noisy
// host: CPU frequency governors, TSC, SMT, NUMA placement, the
// locked-memory limit (check.go), the network device to RDMA device and
// port map through sysfs, following a VLAN's or bond's lower links
// (netdev.go), the order of a host's RDMA devices as rails: NUMA node,
// PCI address, name (rails.go), a port's counters (portcounters.go), and the CPU's cache
// line (cacheline.go), and the warning when a clock read is a large share of
// a test's median sample (clockshare.go). Pure Go: facts are read from /proc and
// /sys (under a root the tests replace). bench adds the device's side
// (bench/device/env.go).
package hostenv
