package verbs

/*
#include "mrbench.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"syscall"
)

// ODPOps is a set of enum ibv_odp_transport_cap_bits: the operations that
// may use On-Demand Paging memory on one transport.
type ODPOps uint32

// ODP operation bits, with C's values.
const (
	ODPSend    ODPOps = C.IBV_ODP_SUPPORT_SEND
	ODPRecv    ODPOps = C.IBV_ODP_SUPPORT_RECV
	ODPWrite   ODPOps = C.IBV_ODP_SUPPORT_WRITE
	ODPRead    ODPOps = C.IBV_ODP_SUPPORT_READ
	ODPAtomic  ODPOps = C.IBV_ODP_SUPPORT_ATOMIC
	ODPSRQRecv ODPOps = C.IBV_ODP_SUPPORT_SRQ_RECV
)

var odpOpNames = []struct {
	op   ODPOps
	name string
}{{ODPSend, "SEND"}, {ODPRecv, "RECV"}, {ODPWrite, "WRITE"}, {ODPRead, "READ"}, {ODPAtomic, "ATOMIC"}, {ODPSRQRecv, "SRQ_RECV"}}

func (o ODPOps) String() string {
	var s []string
	for _, n := range odpOpNames {
		if o&n.op != 0 {
			s = append(s, n.name)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "|")
}

// MarshalText writes the operations as String does, e.g. "SEND|WRITE".
func (o ODPOps) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (o *ODPOps) UnmarshalText(b []byte) error {
	*o = 0
	if string(b) == "none" || len(b) == 0 {
		return nil
	}
next:
	for _, s := range strings.Split(string(b), "|") {
		for _, n := range odpOpNames {
			if s == n.name {
				*o |= n.op
				continue next
			}
		}
		return fmt.Errorf("verbs: unknown ODP operation %q", s)
	}
	return nil
}

// ODPCaps are a device's On-Demand Paging capabilities
// (ibv_device_attr_ex.odp_caps).
type ODPCaps struct {
	Supported bool   `json:"supported"` // general_caps & IBV_ODP_SUPPORT
	Implicit  bool   `json:"implicit"`  // general_caps & IBV_ODP_SUPPORT_IMPLICIT (whole address space MRs)
	RC        ODPOps `json:"rc"`        // per_transport_caps.rc_odp_caps
	UC        ODPOps `json:"uc"`
	UD        ODPOps `json:"ud"`
}

// ODPCaps queries the device's On-Demand Paging capabilities with
// ibv_query_device_ex.
func (c *Context) ODPCaps() (ODPCaps, error) {
	ctx, err := c.raw()
	if err != nil {
		return ODPCaps{}, err
	}
	var general C.uint64_t
	var rc, uc, ud C.uint32_t
	if ret := C.rb_query_odp(ctx, &general, &rc, &uc, &ud); ret != 0 {
		return ODPCaps{}, &Error{Op: "ibv_query_device_ex", Detail: c.name, Err: syscall.Errno(ret)}
	}
	return ODPCaps{
		Supported: general&C.IBV_ODP_SUPPORT != 0,
		Implicit:  general&C.IBV_ODP_SUPPORT_IMPLICIT != 0,
		RC:        ODPOps(rc), UC: ODPOps(uc), UD: ODPOps(ud),
	}, nil
}

// NotSupportedError: the device lacks a feature, e.g. "ODP not supported by
// rxe0". It matches ErrNotSupported with errors.Is.
type NotSupportedError struct {
	Feature string // e.g. "ODP", "ODP RC WRITE"
	Device  string
}

func (e *NotSupportedError) Error() string { return e.Feature + " not supported by " + e.Device }

// Unwrap returns ErrNotSupported.
func (e *NotSupportedError) Unwrap() error { return ErrNotSupported }

// CheckODP returns nil when the device can register On-Demand Paging memory
// (AccessOnDemand) and use it as RC memory for every operation in rc (0:
// registration only). Otherwise it returns *NotSupportedError: "ODP not
// supported by rxe0" when the device has no ODP at all (rxe before Linux
// 6.15, siw), "ODP RC WRITE not supported by mlx5_0" when it lacks an
// operation.
func (c *Context) CheckODP(rc ODPOps) error {
	caps, err := c.ODPCaps()
	if err != nil {
		return err
	}
	if !caps.Supported {
		return &NotSupportedError{Feature: "ODP", Device: c.name}
	}
	if missing := rc &^ caps.RC; missing != 0 {
		return &NotSupportedError{Feature: "ODP RC " + missing.String(), Device: c.name}
	}
	return nil
}
