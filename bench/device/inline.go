package device

import (
	"fmt"
	"slices"
	"sync"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// probeInlineMax is the largest inline size the probe asks for, bytes.
// Devices grant 0 to a few hundred bytes (rxe 512, siw 80, mlx5 up to
// about 900); an mlx5 rounds a request up, so asking high finds its limit.
const probeInlineMax = 1024

// inlineCache holds each device's probed inline limit per QP type, for the
// life of the process (one probe per device and QP type per run).
var inlineCache = struct {
	sync.Mutex
	m map[string]int
}{m: map[string]int{}}

// MaxInline is the largest inline size, bytes, that the device grants to
// a QP of type t: it creates QPs with max_inline_data probeInlineMax, then
// binary-searches down on refusal, and reads back what the device granted.
// The answer is cached per device and QP type.
func (d *Device) MaxInline(t verbs.QPType) (int, error) {
	key := d.Ctx.Name() + "/" + t.String()
	inlineCache.Lock()
	defer inlineCache.Unlock()
	if v, ok := inlineCache.m[key]; ok {
		return v, nil
	}
	pd, err := d.Ctx.AllocPD()
	if err != nil {
		return 0, err
	}
	defer pd.Close()
	cq, err := d.Ctx.CreateCQ(2, false)
	if err != nil {
		return 0, err
	}
	defer cq.Close()
	try := func(n int) (int, bool) {
		qp, err := pd.CreateQP(verbs.QPConfig{Type: t, SendCQ: cq, RecvCQ: cq,
			Caps: verbs.QPCaps{MaxSendWR: 1, MaxRecvWR: 1, MaxInlineData: n}})
		if err != nil {
			return 0, false
		}
		defer qp.Close()
		return qp.Caps().MaxInlineData, true
	}
	best, ok := try(probeInlineMax)
	if !ok {
		if best, ok = try(0); !ok {
			return 0, fmt.Errorf("inline probe: %s creates no %s QP at all", d.Ctx.Name(), t)
		}
		lo, hi := 0, probeInlineMax // try(lo) succeeds, try(hi) fails
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if g, ok := try(mid); ok {
				lo, best = mid, max(g, mid)
			} else {
				hi = mid
			}
		}
	}
	inlineCache.m[key] = best
	return best, nil
}

// InlineFor returns the inline size, bytes, with which an endpoint of spec
// s on d creates its QP, and why. A message is sent inline when it fits.
func (d *Device) InlineFor(s spec.Spec) (int, string, error) {
	switch s.InlinePolicy {
	case spec.InlineSize:
		if s.Inline > 0 {
			t, err := QPType(s)
			if err != nil {
				return 0, "", err
			}
			if probe, err := d.MaxInline(t); err == nil && s.Inline > probe {
				return 0, "", fmt.Errorf("--inline-size %d: %w: %s grants at most %d bytes of inline data on %s QPs",
					s.Inline, verbs.ErrNotSupported, d.Ctx.Name(), probe, s.QPTypeLabel())
			}
		}
		return s.Inline, fmt.Sprintf("--inline-size %d", s.Inline), nil
	case spec.InlinePerftest:
		n, why := perftestInline(s, d.Attr)
		return n, "--inline-size perftest: " + why, nil
	}
	if s.Mode == result.ModeBW {
		return 0, "auto: none in bandwidth tests (perftest's default)", nil
	}
	if s.MRModeOrDefault() == result.MRModePerOp {
		return 0, "auto: none with --mr-mode per-op (an inline message needs no registration)", nil
	}
	limit := perftestLatencyInline(s)
	if limit == 0 {
		return 0, fmt.Sprintf("auto: %s carries no payload to send inline", s.Op), nil
	}
	t, err := QPType(s)
	if err != nil {
		return 0, "", err
	}
	probe, err := d.MaxInline(t)
	if err != nil {
		return 0, "", err
	}
	n := min(probe, limit)
	why := fmt.Sprintf("auto: %s grants up to %d B on %s QPs; %s latency capped at perftest's %d B",
		d.Ctx.Name(), probe, s.QPTypeLabel(), s.Op, limit)
	if s.Size > n {
		why += fmt.Sprintf(" (%d B messages do not fit: sent from memory)", s.Size)
	}
	return n, why, nil
}

// perftestLatencyInline is perftest's default inline size for a latency
// test of s's op and QP type on a device it recognises (0: none).
func perftestLatencyInline(s spec.Spec) int {
	if s.QPTypeOrDefault() == result.QPTypeUD {
		return s.Traits().PerftestInlineUD
	}
	return s.Traits().PerftestInline
}

// perftestInline reproduces perftest 6.x's inline default for s on a device
// with attr (ctx_set_max_inline): 0 on devices it does not recognise, 0 in
// bandwidth tests and for READ and atomics, else its per-op latency value
// or its vendor override.
func perftestInline(s spec.Spec, attr verbs.DeviceAttr) (int, string) {
	vendor, ok := perftestDevice(attr.VendorID, attr.VendorPartID)
	switch {
	case !ok:
		return 0, fmt.Sprintf("perftest disables inline on devices it does not recognise (vendor_id 0x%x, vendor_part_id %d)",
			attr.VendorID, attr.VendorPartID)
	case s.Mode == result.ModeBW:
		return 0, "perftest sends nothing inline in bandwidth tests"
	case perftestLatencyInline(s) == 0:
		return 0, fmt.Sprintf("perftest sends nothing inline for %s", s.Op)
	}
	if v, ok := perftestVendorInline[vendor]; ok {
		return v, fmt.Sprintf("perftest's value for %s devices", vendor)
	}
	return perftestLatencyInline(s), fmt.Sprintf("perftest's latency value for %s on %s", s.Op, s.QPTypeLabel())
}

// perftestVendorInline are perftest's per-vendor latency overrides, bytes.
var perftestVendorInline = map[string]int{
	"Broadcom NetXtreme": 96, "EFA": 32, "QLogic E4": 128, "ERDMA": 96, "HNS": 32, "Intel gen1": 48, "Intel gen2": 101,
}

// perftestDevice names the device family perftest's ib_dev_name() finds for
// the ids, and whether it recognises the device at all (perftest 6.x; it
// matches most vendors on vendor_part_id alone).
func perftestDevice(vendor, part uint32) (string, bool) {
	switch vendor {
	case 0x1425: // Chelsio
		switch part >> 12 {
		case 4, 10, 5, 11, 6:
			return "Chelsio", true
		}
		return "", false
	case 0x8086: // Intel
		if part == 14289 {
			return "Intel gen1", true
		}
		return "Intel gen2", true
	}
	p := int(part)
	switch {
	case slices.Contains([]int{4099, 4100, 4103, 4104, 4113, 4115, 4116, 4117, 4118, 4119, 4120, 4121, 4122, 4123, 4124,
		4125, 4126, 4127, 4129, 4131, 41682, 41683, 41686, 41692, 25408, 25418, 25428, 25448}, p),
		p >= 26418 && p <= 26478 && (p-26418)%10 == 0:
		return "Mellanox", true
	case p == 1824:
		return "Emulex", true
	case slices.Contains([]int{5684, 5700, 5716, 5718, 5734}, p):
		return "QLogic E4", true
	case p >= 32880 && p <= 32883, p == 32912, p == 33136, p == 33168:
		return "QLogic", true
	case slices.Contains([]int{5638, 5652, 5824, 5825, 5827, 5839, 5846, 5847, 5848, 5849, 5855, 5858, 5859, 5861,
		5867, 5869, 5871, 5872, 5873, 5968, 5984, 6169, 55296, 55298, 55300}, p):
		return "Broadcom NetXtreme", true
	case p >= 61344 && p <= 61346:
		return "EFA", true
	case p == 4223:
		return "ERDMA", true
	case p >= 41506 && p <= 41510, p == 41512, p == 41519:
		return "HNS", true
	}
	return "", false
}

// QPType maps the spec's QP type to the verbs one.
func QPType(s spec.Spec) (verbs.QPType, error) {
	switch s.QPTypeOrDefault() {
	case result.QPTypeRC:
		return verbs.QPTypeRC, nil
	case result.QPTypeUC:
		return verbs.QPTypeUC, nil
	case result.QPTypeUD:
		return verbs.QPTypeUD, nil
	}
	return 0, fmt.Errorf("QP type %q unknown; valid: rc, uc, ud", s.QPType)
}
