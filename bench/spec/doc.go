// Package spec is what one test is: the Spec the client sends and the
// server runs, the Plan that the client's flags expand into Specs, every
// default and limit, and the op table. Pure Go (bench/result and the
// standard library only: TestSpecIsPure in internal/buildcheck), so that the test definition,
// its validation and FuzzSpecDecode build and run without rdma-core.
// A device's limits come in as plain data (DeviceLimits, filled by
// bench/device/device.go from verbs), so that they too are checked here.
//
// Files by concept: spec.go (Spec, Load, the names and labels of a test,
// its timed interval), plan.go (Plan: modes × ops × sizes), ops.go (the
// op table: one row per op with its traits; a new op is a row there),
// defaults.go (every default, pinned to docs/defaults.md), validate.go
// (the limits, and Validate), parse.go (flag values: sizes, CPU lists,
// lists), shape.go (--limit-bw, --limit-msgrate), percentiles.go
// (--percentiles, --confidence, --repeat), mrmode.go (--mr-mode,
// --hugepages), inline.go (inline policies), choices.go (the options that
// differ from perftest: address stepping, P_Key index, completion
// vectors), bidir.go (-b), srq.go (--srq), verify.go (--verify),
// loadsweep.go (--load-sweep), repeat.go (--repeat's bound), workload.go
// (the workload knobs: --region, --access, --mrs, --sge), device.go
// (a spec against a device's limits: DeviceLimits, CheckDevice).
// attack.go holds the load's attacker knobs of rdmabench isolation
// (AltSize, RNR, ChurnSize, Threads).
package spec
