package device

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// ErrPortNotActive: the port is not in the PORT_ACTIVE state (link down, or
// on InfiniBand no subnet manager).
var ErrPortNotActive = errors.New("port not active")

// Device is an open device, port and GID as one side of a test uses them.
type Device struct {
	Ctx       *verbs.Context
	Attr      verbs.DeviceAttr
	Port      verbs.PortAttr
	GID       verbs.GIDEntry
	GIDReason string
	GIDGiven  bool // the GID was given (--gid-index): InfiniBand QPs then use a GRH (bench/endpoint's useGRH)
	// Reason says why this device was chosen: with --ib-dev, by route
	// (its GID table holds the control connection's address), or first.
	Reason string
	// events watches the device's asynchronous events (asyncevents.go);
	// nil when the watch could not start.
	events *deviceEvents
	numa   placement // set by Place
}

// Open opens name ("": the active port that carries local, else the
// first active port of any device, as Choose), checks that port (0:
// the device's first active port) is active and picks the GID: gidIndex >= 0 forces one, -1 picks the best GID for
// the local control address (verbs.BestGID), -2 leaves it to PickGID.
func Open(name string, port, gidIndex int, local netip.Addr) (*Device, error) {
	return openWith(verbs.Open, name, port, gidIndex, local)
}

// OpenCM is Open on librdmacm's context of the device
// (verbs.OpenCM), which rdma_cm QPs need and other tests can use too.
func OpenCM(name string, port, gidIndex int, local netip.Addr) (*Device, error) {
	return openWith(verbs.OpenCM, name, port, gidIndex, local)
}

func openWith(open func(string) (*verbs.Context, error), name string, port, gidIndex int, local netip.Addr) (*Device, error) {
	reason := ""
	if name == "" { // not the first device: the first active port (Choose)
		var err error
		if name, port, reason, err = Choose("", port, local); err != nil {
			return nil, err
		}
	}
	ctx, err := open(name)
	if err != nil {
		return nil, err
	}
	d := &Device{Ctx: ctx, Reason: reason}
	if err := d.init(port, gidIndex, local); err != nil {
		ctx.Close()
		return nil, err
	}
	d.events = watchEvents(d)
	return d, nil
}

func (d *Device) init(port, gidIndex int, local netip.Addr) error {
	var err error
	if d.Attr, err = d.Ctx.QueryDevice(); err != nil {
		return err
	}
	if port == 0 { // the first active port, else port 1 (whose state the error names)
		port = 1
		for p := 1; p <= d.Attr.PhysPortCnt; p++ {
			if pa, err := d.Ctx.QueryPort(p); err == nil && pa.Active {
				port = p
				break
			}
		}
	}
	if d.Port, err = d.Ctx.QueryPort(port); err != nil {
		return err
	}
	if !d.Port.Active {
		return fmt.Errorf("%w: %s port %d is %s (phys_state %d, %s)", ErrPortNotActive, d.Ctx.Name(), port, d.Port.State, d.Port.PhysState, d.Port.LinkLayer)
	}
	if gidIndex < -1 { // the server picks per connection
		return nil
	}
	return d.PickGID(port, gidIndex, local)
}

// PickGID sets d.GID: gidIndex >= 0 forces one, otherwise the best GID for
// the local control address.
func (d *Device) PickGID(port, gidIndex int, local netip.Addr) error {
	var err error
	if gidIndex >= 0 {
		if d.GID, err = d.Ctx.GID(port, gidIndex); err != nil {
			return err
		}
		d.GIDReason = "chosen with --gid-index"
		d.GIDGiven = true
		return nil
	}
	tbl, err := d.Ctx.GIDTable(port)
	if err != nil {
		return err
	}
	g, reason, ok := verbs.BestGID(tbl, local)
	if !ok {
		if d.Port.LinkLayer == "Ethernet" {
			return fmt.Errorf("%s port %d has no GIDs: a RoCE port needs an IP address on its netdev", d.Ctx.Name(), port)
		}
		return nil // IB without GRH
	}
	d.GID, d.GIDReason = g, "auto: "+reason
	return nil
}

// Close closes the device.
func (d *Device) Close() error { return errors.Join(d.events.close(), d.Ctx.Close()) }

// Limits are the device's and port's facts that specs are held to
// (spec.Spec.CheckDevice).
func (d *Device) Limits() spec.DeviceLimits {
	return spec.DeviceLimits{Name: d.Ctx.Name(), Port: d.Port.Port, MaxQPWR: d.Attr.MaxQPWR, MaxCQE: d.Attr.MaxCQE,
		MaxMRSize: d.Attr.MaxMRSize, AtomicCap: d.Attr.AtomicCap != 0, IWARP: d.Ctx.IsIWARP(), MaxMsgSize: uint64(d.Port.MaxMsgSize),
		PKeyTableLen: d.Port.PKeyTblLen, NumCompVectors: d.Ctx.NumCompVectors(), MaxSRQ: d.Attr.MaxSRQ, MaxSRQWR: d.Attr.MaxSRQWR,
		MaxMR: d.Attr.MaxMR, MaxSGE: d.Attr.MaxSGE, MaxSGERd: d.Attr.MaxSGERd}
}

// Lacks makes an error of spec.CheckDevice* that wraps
// spec.ErrNotSupported wrap verbs.ErrNotSupported too, its text unchanged.
func Lacks(err error) error {
	if errors.Is(err, spec.ErrNotSupported) {
		return notSupportedError{err}
	}
	return err
}

// notSupportedError is an error of the spec's checks that the device lacks
// something: it matches verbs.ErrNotSupported as well.
type notSupportedError struct{ err error }

func (e notSupportedError) Error() string   { return e.err.Error() }
func (e notSupportedError) Unwrap() []error { return []error{e.err, verbs.ErrNotSupported} }
