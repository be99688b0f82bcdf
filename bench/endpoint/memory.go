package endpoint

import (
	"errors"
	"fmt"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// endpointArea is the size of each of an endpoint's two buffer areas
// (source, and target/receive), bytes: the message (with the GRH for UD
// receives) rounded up to 4 KiB. An endpoint's buffer holds two.
func endpointArea(s spec.Spec) int {
	n := s.Size
	if s.QPTypeOrDefault() == result.QPTypeUD {
		n += verbs.GRHSize // receives start with the GRH
	}
	_, cycle := s.AddrStep() // stepped addresses range over the whole cycle
	return max((n+4095)&^4095, cycle)
}

// PoolConfig is the pool of count endpoints of spec s on one side:
// LOCAL_WRITE plus only the remote access the test needs (RemoteAccess),
// ON_DEMAND in odp mode.
func PoolConfig(s spec.Spec, client, iwarp bool, count int, odp, huge bool) verbs.PoolConfig {
	c := verbs.PoolConfig{BufSize: 2 * endpointArea(s), Count: count,
		Access: verbs.AccessLocalWrite | RemoteAccess(s, client, iwarp) | relaxedAccess(s), HugePages: huge}
	if odp {
		c.Access |= verbs.AccessOnDemand
		c.ODPOps = odpOps(s)
	}
	return c
}

// odpOps are the RC operations whose memory must be ODP in odp mode
// (verbs.Context.CheckODP); UC and UD are checked for registration only.
func odpOps(s spec.Spec) verbs.ODPOps {
	if s.QPTypeOrDefault() != result.QPTypeRC {
		return 0
	}
	return OpVerbs[s.Op].ODP
}

// Memory is the registered memory of one side of one test: a PD and
// fresh pools, registered once before any QP exists and released after
// the last QP is gone. The measured QPs (probe and --qps) share one pool;
// the --load-qps QPs, with their own size and access, another.
type Memory struct {
	PD       *verbs.PD
	Measured *verbs.Pool
	Load     *verbs.Pool // nil without load QPs
	Idle     *verbs.Pool // nil without idle QPs (--qps-idle)
}

// NewMemory registers the pools of spec s, bound to the device's NUMA
// node when its placement says so (Device.Place). With --hugepages it first
// checks that huge pages are reserved (ErrNoHugePages); in odp mode the
// device's ODP support (*verbs.NotSupportedError, "ODP not supported by
// rxe0"), before any QP exists.
func NewMemory(dev *device.Device, s spec.Spec, client bool) (_ *Memory, err error) {
	if s.HugePages {
		if err := ReadMeminfo().NoHugePages(); err != nil {
			return nil, err
		}
	}
	m := &Memory{}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	if m.PD, err = dev.Ctx.AllocPD(); err != nil {
		return nil, err
	}
	if err = dev.BindMemory(func() error { return m.newPools(dev, s, client) }); err != nil {
		return nil, err
	}
	return m, nil
}

// newPools maps and registers the pools of spec s on m.pd.
func (m *Memory) newPools(dev *device.Device, s spec.Spec, client bool) error {
	var err error
	odp := s.MRModeOrDefault() == result.MRModeODP
	if m.Measured, err = m.PD.NewPool(PoolConfig(s, client, dev.Ctx.IsIWARP(), s.NumQPs(), odp, s.HugePages)); err != nil {
		return fmt.Errorf("--mr-mode %s: %w", s.MRModeOrDefault(), err)
	}
	if s.Load != nil && s.Load.QPs > 0 {
		if m.Load, err = m.PD.NewPool(PoolConfig(s.LoadSpec(), client, dev.Ctx.IsIWARP(), s.Load.QPs, odp, s.HugePages)); err != nil {
			return fmt.Errorf("--mr-mode %s: load QPs: %w", s.MRModeOrDefault(), err)
		}
	}
	if s.IdleQPs > 0 {
		if m.Idle, err = m.PD.NewPool(PoolConfig(s.IdleSpec(), client, dev.Ctx.IsIWARP(), s.IdleQPs, false, false)); err != nil {
			return fmt.Errorf("--qps-idle %d: %w", s.IdleQPs, err)
		}
	}
	return nil
}

// Close releases the pools, then the PD: call it after every endpoint
// returned its buffer and closed its QP.
func (m *Memory) Close() error {
	var errs []error
	for _, p := range []*verbs.Pool{m.Idle, m.Load, m.Measured} {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	if m.PD != nil {
		errs = append(errs, m.PD.Close())
	}
	return errors.Join(errs...)
}
