package verbs

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"
	"syscall"
	"unsafe"
)

// GIDType is enum ibv_gid_type.
type GIDType int

// GID types.
const (
	GIDTypeIB GIDType = iota
	GIDTypeRoCEv1
	GIDTypeRoCEv2
)

func (t GIDType) String() string {
	switch t {
	case GIDTypeIB:
		return "IB"
	case GIDTypeRoCEv1:
		return "RoCE v1"
	case GIDTypeRoCEv2:
		return "RoCE v2"
	}
	return fmt.Sprintf("GIDType(%d)", int(t))
}

// MarshalText gives the JSON form, e.g. "RoCE v2".
func (t GIDType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// GID is a 16-byte global identifier (an IPv6 address in form).
type GID [16]byte

func (g GID) String() string { return netip.AddrFrom16(g).String() }

// MarshalText gives the JSON form, e.g. "::ffff:127.0.0.1".
func (g GID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText parses the form MarshalText writes.
func (g *GID) UnmarshalText(b []byte) error {
	a, err := netip.ParseAddr(string(b))
	if err != nil {
		return fmt.Errorf("bad GID %q: %w", b, err)
	}
	*g = a.As16()
	return nil
}

// IsZero reports an unset GID.
func (g GID) IsZero() bool { return g == GID{} }

// IsLinkLocal reports an fe80::/10 GID (not routable).
func (g GID) IsLinkLocal() bool { return netip.AddrFrom16(g).IsLinkLocalUnicast() }

// IPv4 returns the IPv4 address of an IPv4-mapped GID.
func (g GID) IPv4() (netip.Addr, bool) {
	a := netip.AddrFrom16(g)
	if a.Is4In6() {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

// GIDEntry is one valid entry of a port's GID table.
type GIDEntry struct {
	Index  int     `json:"index"`
	GID    GID     `json:"gid"`
	Type   GIDType `json:"type"`
	Netdev string  `json:"netdev,omitempty"`
}

// GIDTable lists the valid entries of a port's GID table (empty slots are
// skipped), in index order. It reads the table in one call
// (ibv_query_gid_table) where the kernel has it, else entry by entry: a
// RoCE table has hundreds of slots, and the choice of a device by route
// reads every port's table.
func (c *Context) GIDTable(port int) ([]GIDEntry, error) {
	pa, err := c.QueryPort(port)
	if err != nil {
		return nil, err
	}
	if out, ok := c.gidTableAtOnce(port); ok {
		return out, nil
	}
	var out []GIDEntry
	for i := 0; i < pa.GIDTblLen; i++ {
		e, err := c.gidEntry(port, i)
		if errors.Is(err, syscall.ENODATA) || errors.Is(err, syscall.EINVAL) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if e.GID.IsZero() {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// GID returns entry index of the port's GID table. An index out of range or
// an empty slot is an error that names the index and the valid ones.
func (c *Context) GID(port, index int) (GIDEntry, error) {
	tbl, err := c.GIDTable(port)
	if err != nil {
		return GIDEntry{}, err
	}
	for _, e := range tbl {
		if e.Index == index {
			return e, nil
		}
	}
	valid := make([]string, 0, len(tbl))
	for _, e := range tbl {
		valid = append(valid, fmt.Sprintf("%d (%s %s)", e.Index, e.Type, e.GID))
	}
	return GIDEntry{}, &Error{Op: "GID index",
		Detail: fmt.Sprintf("index %d is not a valid GID on %s port %d; valid: %s", index, c.name, port, strings.Join(valid, ", ")),
		Err:    syscall.EINVAL}
}

// gidTableAtOnce is GIDTable through ibv_query_gid_table, which returns
// the valid entries of every port; ok is false where that call fails or
// finds none for the port (the caller then reads entry by entry), and on
// iWARP, whose ports the kernel's table query skips.
func (c *Context) gidTableAtOnce(port int) ([]GIDEntry, bool) {
	if c.IsIWARP() {
		return nil, false
	}
	ctx, err := c.raw()
	if err != nil {
		return nil, false
	}
	var da C.struct_ibv_device_attr
	if rc := C.ibv_query_device(ctx, &da); rc != 0 {
		return nil, false
	}
	total := 0
	for p := 1; p <= int(da.phys_port_cnt); p++ {
		var a C.struct_ibv_port_attr
		if rc := C.rb_query_port(ctx, C.uint8_t(p), &a); rc != 0 {
			return nil, false
		}
		total += int(a.gid_tbl_len)
	}
	if total == 0 {
		return nil, false
	}
	size := C.size_t(total) * C.size_t(unsafe.Sizeof(C.struct_ibv_gid_entry{}))
	buf := C.malloc(size)
	if buf == nil {
		return nil, false
	}
	defer C.free(buf)
	n := C.ibv_query_gid_table(ctx, (*C.struct_ibv_gid_entry)(buf), C.size_t(total), 0)
	if n < 0 {
		return nil, false
	}
	ents := unsafe.Slice((*C.struct_ibv_gid_entry)(buf), int(n))
	var out []GIDEntry
	for i := range ents {
		e := &ents[i]
		if int(e.port_num) != port {
			continue
		}
		g := c.gidEntryOf(e)
		if !g.GID.IsZero() {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, len(out) > 0
}

func (c *Context) gidEntry(port, index int) (GIDEntry, error) {
	ctx, err := c.raw()
	if err != nil {
		return GIDEntry{}, err
	}
	var e C.struct_ibv_gid_entry
	if rc := C.ibv_query_gid_ex(ctx, C.uint32_t(port), C.uint32_t(index), &e, 0); rc != 0 {
		return GIDEntry{}, &Error{Op: "ibv_query_gid_ex", Detail: fmt.Sprintf("%s port %d index %d", c.name, port, index), Err: syscall.Errno(rc)}
	}
	return c.gidEntryOf(&e), nil
}

// gidEntryOf converts one struct ibv_gid_entry.
func (c *Context) gidEntryOf(e *C.struct_ibv_gid_entry) GIDEntry {
	var g GID
	copy(g[:], C.GoBytes(unsafe.Pointer(&e.gid), 16))
	out := GIDEntry{Index: int(e.gid_index), GID: g, Type: GIDType(e.gid_type)}
	if e.ndev_ifindex != 0 {
		if ifc, err := net.InterfaceByIndex(int(e.ndev_ifindex)); err == nil {
			out.Netdev = ifc.Name
		}
	}
	return out
}
