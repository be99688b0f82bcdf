package spec

// Inline policies (Spec.InlinePolicy, --inline-size).
const (
	// InlineAuto (the default, "") asks the device: latency tests send
	// SEND and WRITE payloads inline up to the largest size the device
	// grants for the QP type, capped at perftest's per-op latency values;
	// bandwidth tests, READ and atomics send nothing inline (perftest's
	// defaults).
	InlineAuto = ""
	// InlineSize uses Spec.Inline bytes whatever the test (--inline-size N).
	InlineSize = "size"
	// InlinePerftest reproduces perftest's rules exactly, including its
	// whitelist of devices (--inline-size perftest): 0 on rxe and siw.
	InlinePerftest = "perftest"
)
