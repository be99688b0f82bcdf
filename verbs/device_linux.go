package verbs

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/rdmabench/rdmabench/verbs/linkspeed"
)

// sysfsRoot is where the port speed's sysfs fallback reads (linkspeed.Port).
var sysfsRoot = "/sys"

// sysfsIB is where the kernel lists RDMA devices (a variable for tests).
var sysfsIB = "/sys/class/infiniband"

// DeviceNames lists the RDMA devices libibverbs can open, sorted by name.
// It returns ErrNoKernelSupport (kernel without RDMA), ErrNoProvider (the
// kernel has devices but no userspace provider) or ErrNoDevices, each
// wrapped with a hint.
func DeviceNames() ([]string, error) {
	var n C.int
	list, err := C.ibv_get_device_list(&n)
	if list == nil {
		if errors.Is(err, syscall.ENOSYS) {
			return nil, fmt.Errorf("%w; %s", ErrNoKernelSupport, SoftRoCEHint)
		}
		return nil, newError("ibv_get_device_list", err)
	}
	defer C.ibv_free_device_list(list)
	names := make([]string, 0, int(n))
	for i := 0; i < int(n); i++ {
		names = append(names, C.GoString(C.ibv_get_device_name(C.rb_dev_at(list, C.int(i)))))
	}
	sort.Strings(names)
	if len(names) == 0 {
		if k := kernelDevices(); len(k) > 0 {
			return nil, fmt.Errorf("%w: the kernel has %s but libibverbs opens none; install the "+
				"userspace providers (Debian: ibverbs-providers) or, for a static binary, link them in "+
				"(RDMA_STATIC_PROVIDERS)", ErrNoProvider, strings.Join(k, ", "))
		}
		return nil, fmt.Errorf("%w (%s is empty); %s", ErrNoDevices, sysfsIB, SoftRoCEHint)
	}
	return names, nil
}

// kernelDevices lists the device names the kernel exposes in sysfs.
func kernelDevices() []string {
	ents, err := os.ReadDir(sysfsIB)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// Context is an open RDMA device (struct ibv_context).
type Context struct {
	mu     sync.Mutex
	ctx    *C.struct_ibv_context
	name   string
	nopen  int // objects created from this context and not yet closed
	closed bool
	cm     bool // librdmacm's context (OpenCM): librdmacm closes it
}

// Open opens the named device; an empty name opens the first device (sorted
// by name). An unknown name gives *DeviceNotFoundError listing the
// available devices.
func Open(name string) (*Context, error) {
	names, err := DeviceNames()
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = names[0]
	}
	var n C.int
	list, err := C.ibv_get_device_list(&n)
	if list == nil {
		return nil, newError("ibv_get_device_list", err)
	}
	defer C.ibv_free_device_list(list)
	for i := 0; i < int(n); i++ {
		dev := C.rb_dev_at(list, C.int(i))
		if C.GoString(C.ibv_get_device_name(dev)) != name {
			continue
		}
		ctx, err := C.ibv_open_device(dev)
		if ctx == nil {
			return nil, &Error{Op: "ibv_open_device", Detail: name + ", /dev/infiniband/" +
				C.GoString(&dev.dev_name[0]), Err: err}
		}
		return &Context{ctx: ctx, name: name}, nil
	}
	for _, k := range kernelDevices() {
		if k == name {
			return nil, fmt.Errorf("%w: %s (install ibverbs-providers)", ErrNoProvider, name)
		}
	}
	return nil, &DeviceNotFoundError{Name: name, Available: names}
}

// Name is the device name, e.g. "rxe0".
func (c *Context) Name() string { return c.name }

func (c *Context) acquire() (*C.struct_ibv_context, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	c.nopen++
	return c.ctx, nil
}

func (c *Context) release() {
	c.mu.Lock()
	c.nopen--
	c.mu.Unlock()
}

func (c *Context) raw() (*C.struct_ibv_context, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	return c.ctx, nil
}

// Close closes the device. It fails while PDs, CQs or other objects created
// from it are open. Close is idempotent; nil on a nil *Context.
func (c *Context) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	if c.nopen > 0 {
		return fmt.Errorf("verbs: close %s: %d objects still open", c.name, c.nopen)
	}
	c.closed = true
	if c.cm {
		return nil
	}
	if rc := C.ibv_close_device(c.ctx); rc != 0 {
		return &Error{Op: "ibv_close_device", Err: syscall.Errno(-rc)}
	}
	return nil
}

// DeviceAttr holds the attributes of ibv_query_device that rdmabench uses.
type DeviceAttr struct {
	FWVer           string `json:"fw_ver"`
	NodeGUID        uint64 `json:"node_guid"`
	VendorID        uint32 `json:"vendor_id"`
	VendorPartID    uint32 `json:"vendor_part_id"`
	HWVer           uint32 `json:"hw_ver"`
	MaxMRSize       uint64 `json:"max_mr_size"`
	MaxQP           int    `json:"max_qp"`
	MaxQPWR         int    `json:"max_qp_wr"`
	MaxSGE          int    `json:"max_sge"`
	MaxCQ           int    `json:"max_cq"`
	MaxCQE          int    `json:"max_cqe"`
	MaxMR           int    `json:"max_mr"`
	MaxPD           int    `json:"max_pd"`
	MaxQPRdAtom     int    `json:"max_qp_rd_atom"`
	MaxQPInitRdAtom int    `json:"max_qp_init_rd_atom"`
	AtomicCap       int    `json:"atomic_cap"` // 0 none, 1 HCA, 2 global
	PhysPortCnt     int    `json:"phys_port_cnt"`
	MaxSRQ          int    `json:"max_srq"` // 0: no shared receive queues
	MaxSRQWR        int    `json:"max_srq_wr"`
	MaxSRQSGE       int    `json:"max_srq_sge"`
	MaxSGERd        int    `json:"max_sge_rd"` // SGEs of a READ work request
}

// QueryDevice calls ibv_query_device.
func (c *Context) QueryDevice() (DeviceAttr, error) {
	ctx, err := c.raw()
	if err != nil {
		return DeviceAttr{}, err
	}
	var a C.struct_ibv_device_attr
	if rc := C.ibv_query_device(ctx, &a); rc != 0 {
		return DeviceAttr{}, &Error{Op: "ibv_query_device", Detail: c.name, Err: syscall.Errno(rc)}
	}
	return DeviceAttr{
		FWVer:           C.GoString(&a.fw_ver[0]),
		NodeGUID:        bits.ReverseBytes64(uint64(a.node_guid)), // __be64 on little-endian hosts
		VendorID:        uint32(a.vendor_id),
		VendorPartID:    uint32(a.vendor_part_id),
		HWVer:           uint32(a.hw_ver),
		MaxMRSize:       uint64(a.max_mr_size),
		MaxQP:           int(a.max_qp),
		MaxQPWR:         int(a.max_qp_wr),
		MaxSGE:          int(a.max_sge),
		MaxCQ:           int(a.max_cq),
		MaxCQE:          int(a.max_cqe),
		MaxMR:           int(a.max_mr),
		MaxPD:           int(a.max_pd),
		MaxQPRdAtom:     int(a.max_qp_rd_atom),
		MaxQPInitRdAtom: int(a.max_qp_init_rd_atom),
		AtomicCap:       int(a.atomic_cap),
		PhysPortCnt:     int(a.phys_port_cnt),
		MaxSRQ:          int(a.max_srq),
		MaxSRQWR:        int(a.max_srq_wr),
		MaxSRQSGE:       int(a.max_srq_sge),
		MaxSGERd:        int(a.max_sge_rd),
	}, nil
}

// NumCompVectors is the device's number of completion vectors
// (ibv_context.num_comp_vectors): a CQ's vector is below it.
func (c *Context) NumCompVectors() int { return int(c.ctx.num_comp_vectors) }

// IsIWARP reports whether the device speaks iWARP (IBV_TRANSPORT_IWARP):
// its QPs connect only through rdma_cm, and a READ's local sink needs
// REMOTE_WRITE access.
func (c *Context) IsIWARP() bool {
	return c.ctx.device.transport_type == C.IBV_TRANSPORT_IWARP
}

// IsSoftware reports whether the device is a software RDMA provider (rxe,
// siw): such devices have no parent hardware device in sysfs.
func (c *Context) IsSoftware() bool {
	if strings.HasPrefix(c.name, "rxe") || strings.HasPrefix(c.name, "siw") {
		return true
	}
	if _, err := os.Stat(filepath.Join(sysfsIB, c.name, "parent")); err == nil {
		if _, err := os.Stat(filepath.Join(sysfsIB, c.name, "device")); err != nil {
			return true
		}
	}
	return false
}

// Driver names the kernel driver where sysfs tells it ("rdma_rxe" for rxe
// devices), or "".
func (c *Context) Driver() string {
	if l, err := os.Readlink(filepath.Join(sysfsIB, c.name, "device", "driver")); err == nil {
		return filepath.Base(l)
	}
	switch {
	case strings.HasPrefix(c.name, "rxe"):
		return "rdma_rxe"
	case strings.HasPrefix(c.name, "siw"):
		return "siw"
	}
	return ""
}

// PortAttr holds the attributes of ibv_query_port that rdmabench uses.
type PortAttr struct {
	Port       int     `json:"port"`
	State      string  `json:"state"` // e.g. "PORT_ACTIVE"
	Active     bool    `json:"active"`
	PhysState  int     `json:"phys_state"`
	LinkLayer  string  `json:"link_layer"` // "InfiniBand" or "Ethernet"
	MaxMTU     int     `json:"max_mtu"`    // bytes
	ActiveMTU  int     `json:"active_mtu"` // bytes
	GIDTblLen  int     `json:"gid_tbl_len"`
	PKeyTblLen int     `json:"pkey_tbl_len"` // entries of the P_Key table (--pkey-index below it)
	LID        uint16  `json:"lid"`
	Width      string  `json:"width"`     // e.g. "4X"
	Speed      string  `json:"speed"`     // e.g. "25.0 Gbps"
	LaneGbps   float64 `json:"lane_gbps"` // signalling rate of one lane, Gb/s
	Lanes      int     `json:"lanes"`
	MaxMsgSize uint32  `json:"max_msg_sz"`
	// DataGbps is the link's data rate, Gb/s: lanes × lane rate × line
	// encoding (8b/10b for InfiniBand SDR, DDR and QDR; see package linkspeed);
	// 0 when the speed is unknown.
	DataGbps float64 `json:"data_gbps"`
}

// LinkGbps is the nominal link rate (lanes × lane rate), Gb/s.
func (p PortAttr) LinkGbps() float64 { return p.LaneGbps * float64(p.Lanes) }

// MTUBytes converts enum ibv_mtu to bytes (0 when unknown).
func MTUBytes(m int) int {
	if m >= 1 && m <= 5 {
		return 128 << m
	}
	return 0
}

// MTUEnum converts a byte count (256..4096, a power of two) to enum ibv_mtu.
func MTUEnum(bytes int) (int, error) {
	for e := 1; e <= 5; e++ {
		if 128<<e == bytes {
			return e, nil
		}
	}
	return 0, fmt.Errorf("MTU %d is not one of 256, 512, 1024, 2048, 4096", bytes)
}

var portStates = map[int]string{0: "PORT_NOP", 1: "PORT_DOWN", 2: "PORT_INIT", 3: "PORT_ARMED",
	4: "PORT_ACTIVE", 5: "PORT_ACTIVE_DEFER"}

// QueryPort calls ibv_query_port. A port outside 1..phys_port_cnt gives an
// error that names the port and the device's port count.
func (c *Context) QueryPort(port int) (PortAttr, error) {
	ctx, err := c.raw()
	if err != nil {
		return PortAttr{}, err
	}
	var da C.struct_ibv_device_attr
	if rc := C.ibv_query_device(ctx, &da); rc != 0 {
		return PortAttr{}, &Error{Op: "ibv_query_device", Detail: c.name, Err: syscall.Errno(rc)}
	}
	if port < 1 || port > int(da.phys_port_cnt) {
		return PortAttr{}, &Error{Op: "ibv_query_port",
			Detail: fmt.Sprintf("port %d invalid: %s has %d port(s), numbered from 1", port, c.name, int(da.phys_port_cnt)),
			Err:    syscall.EINVAL}
	}
	var a C.struct_ibv_port_attr
	if rc := C.rb_query_port(ctx, C.uint8_t(port), &a); rc != 0 {
		return PortAttr{}, &Error{Op: "ibv_query_port", Detail: fmt.Sprintf("%s port %d", c.name, port), Err: syscall.Errno(rc)}
	}
	w, qlanes := linkspeed.Width(int(a.active_width))
	ll := "InfiniBand"
	if a.link_layer == C.IBV_LINK_LAYER_ETHERNET {
		ll = "Ethernet"
	}
	sp, lanes := linkspeed.Port(sysfsRoot, c.name, port, int(a.active_speed), qlanes)
	lr := sp.Gbps
	if qlanes == 0 && lanes > 0 { // the width came from sysfs
		w = fmt.Sprintf("%dX", lanes)
	}
	st := portStates[int(a.state)]
	return PortAttr{
		Port: port, State: st, Active: a.state == C.IBV_PORT_ACTIVE, PhysState: int(a.phys_state),
		LinkLayer: ll, MaxMTU: MTUBytes(int(a.max_mtu)), ActiveMTU: MTUBytes(int(a.active_mtu)),
		GIDTblLen: int(a.gid_tbl_len), PKeyTblLen: int(a.pkey_tbl_len), LID: uint16(a.lid), Width: w, Lanes: lanes, LaneGbps: lr,
		Speed: fmt.Sprintf("%.1f Gbps", lr*float64(lanes)), MaxMsgSize: uint32(a.max_msg_sz),
		DataGbps: linkspeed.DataRate(sp, lanes, ll),
	}, nil
}
