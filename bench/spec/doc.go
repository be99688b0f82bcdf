// Package spec is what one test is: the Spec the client sends and the
// server runs, the Plan that the client's flags expand into Specs, every
// default and limit, and the op table. Pure Go (bench/result and the
// standard library only: TestSpecIsPure), so that the test definition,
// its validation and FuzzSpecDecode build and run without rdma-core.
// Facts of a device (its limits) are checked where the device is open,
// in bench (bench/device.go), not here.
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
// loadsweep.go (--load-sweep), repeat.go (--repeat's bound).
package spec
