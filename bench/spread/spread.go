// Package spread is the workload knobs' memory and targets
// (bench/spec/workload.go): a spread test's target side registers its
// region, NumMRs MRs of MRLen bytes over one mapping, granting the peer
// only the op's remote access; with --mrs above 1 the initiator registers
// one message buffer per MR, each its own MR. Package bench makes them
// after the budget passed (NeedOf counts them with Bytes) and closes them
// after the QPs; Engine is each initiator QP's verbs.Spread towards the
// peer's region. A load that spreads (spec.Load.MRs, the MTT/MPT thrash
// attacker) has memory of its own beside the measured QPs', laid out the
// same way from the load's spec (spec.Spec.LoadSpec): Memory holds it,
// its keys travel in proto.QPInfo.LoadRegion.
package spread

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// Layout is what one side of s registers for spreading: n MRs of each
// bytes; 0, 0 when nothing (no spreading, or the initiator of one MR).
func Layout(s spec.Spec, client bool) (n int, each int64) {
	switch {
	case !s.Spread() || (!client && s.LocalOnly()):
		return 0, 0
	case !client:
		return s.NumMRs(), s.MRLen()
	case s.NumMRs() > 1:
		return s.NumMRs(), s.LocalSlot()
	}
	return 0, 0
}

// Bytes is what one side of s maps and registers for spreading, bytes
// (each mapping rounded up to its page): the measured QPs' and the
// load's (spec.Load.MRs).
func Bytes(s spec.Spec, client bool) int64 {
	if s.LoadSpreads() {
		return oneBytes(s, client) + oneBytes(s.LoadSpec(), client)
	}
	return oneBytes(s, client)
}

func oneBytes(s spec.Spec, client bool) int64 {
	n, each := Layout(s, client)
	if n == 0 {
		return 0
	}
	page := int64(os.Getpagesize())
	if s.HugePages {
		page = int64(verbs.HugePageSize())
	}
	return (int64(n)*each + page - 1) / page * page
}

// Memory is one side's spread memory: one mapping and its MRs (none
// when only the load spreads), and the load's.
type Memory struct {
	buf  *verbs.Buffer
	mrs  []*verbs.MR
	load *Memory // the load QPs' (spec.Load.MRs), or nil
}

// New maps and registers one side's spread memory of s on pd, each MR
// with access(the spec of the QPs it serves: s, or s.LoadSpec()), inside
// bind (the device's NUMA binding); nil, nil when the side has none.
func New(pd *verbs.PD, s spec.Spec, client bool, access func(spec.Spec) verbs.Access, bind func(func() error) error) (*Memory, error) {
	m, err := newOne(pd, s, client, access(s), bind)
	if err != nil || !s.LoadSpreads() {
		return m, err
	}
	l := s.LoadSpec()
	load, err := newOne(pd, l, client, access(l), bind)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("load: %w", err), m.Close())
	}
	if m == nil {
		m = &Memory{}
	}
	m.load = load
	return m, nil
}

// newOne maps and registers the spread memory of s alone (not its load's).
func newOne(pd *verbs.PD, s spec.Spec, client bool, access verbs.Access, bind func(func() error) error) (_ *Memory, err error) {
	n, each := Layout(s, client)
	if n == 0 {
		return nil, nil
	}
	m := &Memory{}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	return m, bind(func() error {
		var err error
		if m.buf, err = verbs.AllocBuffer(int(int64(n)*each), s.HugePages); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			mr, err := pd.RegisterMR(m.buf, int(int64(i)*each), int(each), access)
			if err != nil {
				return fmt.Errorf("--mrs %d: MR %d of %d bytes: %w", n, i, each, err)
			}
			m.mrs = append(m.mrs, mr)
		}
		return nil
	})
}

// MappedBytes is what the memory maps, bytes, the load's included (0 on
// a nil *Memory).
func (m *Memory) MappedBytes() int64 {
	if m == nil {
		return 0
	}
	var n int64
	if m.buf != nil {
		n = int64(m.buf.Len())
	}
	return n + m.load.MappedBytes()
}

// SetInfo puts the target side's MRs in its QP information in: the
// measured QPs' in Region, the load's in LoadRegion.
func (m *Memory) SetInfo(in *proto.QPInfo) {
	in.Region = m.Remote()
	if m != nil {
		in.LoadRegion = m.load.Remote()
	}
}

// Remote is the target side's MRs as its peer reaches them, the measured
// QPs' (nil on a nil *Memory or without any).
func (m *Memory) Remote() []proto.MRInfo {
	if m == nil || len(m.mrs) == 0 {
		return nil
	}
	out := make([]proto.MRInfo, len(m.mrs))
	for i, mr := range m.mrs {
		out[i] = proto.MRInfo{Addr: mr.Addr(), Len: mr.Len(), RKey: mr.RKey()}
	}
	return out
}

// Locals is the initiator's buffers, one per MR (nil: none).
func (m *Memory) Locals() []verbs.Memory {
	if m == nil || len(m.mrs) == 0 {
		return nil
	}
	out := make([]verbs.Memory, len(m.mrs))
	for i, mr := range m.mrs {
		out[i] = mr
	}
	return out
}

// Close deregisters the MRs, then unmaps; nil on a nil *Memory.
func (m *Memory) Close() error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, mr := range m.mrs {
		errs = append(errs, mr.Close())
	}
	m.mrs = nil
	errs = append(errs, m.load.Close()) // its own MRs, then its mapping
	return errors.Join(append(errs, m.buf.Close())...)
}

// Engines is the engine spreading of each of an initiator's QPs of s:
// its measured QPs (Engines over peer.Region), then its loads load QPs
// (over peer.LoadRegion, with the load's local buffers); nil entries
// where a QP does not spread, none on the target side.
func (m *Memory) Engines(s spec.Spec, client bool, measured, loads int, peer proto.QPInfo) ([]*verbs.Spread, error) {
	out := make([]*verbs.Spread, measured+loads)
	sps, err := Engines(s, client, measured, peer.Region, m.Locals())
	copy(out, sps)
	if err != nil || !s.LoadSpreads() || loads == 0 {
		return out, err
	}
	var load *Memory
	if m != nil {
		load = m.load
	}
	if sps, err = Engines(s.LoadSpec(), client, loads, peer.LoadRegion, load.Locals()); err != nil {
		return out, fmt.Errorf("load: %w", err)
	}
	copy(out[measured:], sps)
	return out, nil
}

// accessOf maps an access pattern to the engine's.
var accessOf = map[string]verbs.SpreadAccess{spec.AccessSeq: verbs.SpreadSeq, spec.AccessRandom: verbs.SpreadRandom, spec.AccessStride: verbs.SpreadStride}

// Engines is the engine spreading of each of an initiator's n measured
// QPs (Engine); none on the target side (client false) or without
// spreading.
func Engines(s spec.Spec, client bool, n int, peer []proto.MRInfo, locals []verbs.Memory) ([]*verbs.Spread, error) {
	if !s.Spread() || !client {
		return nil, nil
	}
	out := make([]*verbs.Spread, n)
	for i := range out {
		var err error
		if out[i], err = Engine(s, i, peer, locals); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Wait is how long a client waits for the server's QP information of s
// when its per-message deadline is d: d plus 30 s per GiB of region the
// server maps and registers (pinning a large --region takes seconds,
// under TCG tens of seconds: a 1 GiB one took more than 10 s); no
// deadline when d is none.
func Wait(d time.Duration, s spec.Spec) time.Duration {
	if d <= 0 {
		return 0
	}
	return d + time.Duration(Bytes(s, false)>>20)*(30*time.Second>>10)
}

// Engine is the engine spreading of measured QP i of s towards the peer's
// region (its MRs, checked here against s: as many as --mrs, each holding
// every slot), with this side's local buffers (nil: the pool buffer's
// areas). QP i draws its random offsets from the seed + i.
func Engine(s spec.Spec, i int, peer []proto.MRInfo, locals []verbs.Memory) (*verbs.Spread, error) {
	if s.LocalOnly() { // SEND: over the local buffers, round robin (random with --access random)
		sp := &verbs.Spread{Locals: locals, Access: accessOf[s.AccessOrDefault()], Step: 1, Slots: 1}
		if s.AccessOrDefault() == spec.AccessRandom {
			sp.Seed = s.SeedOrDefault() + uint64(i)
		}
		return sp, nil
	}
	if len(peer) != s.NumMRs() {
		return nil, fmt.Errorf("peer registered %d MRs for the region, the test spreads over %d (--mrs)", len(peer), s.NumMRs())
	}
	sp := &verbs.Spread{Locals: locals, Access: accessOf[s.AccessOrDefault()], Step: uint64(s.SpreadStep()), Slots: uint64(s.Slots())}
	if s.AccessOrDefault() == spec.AccessRandom {
		sp.Seed = s.SeedOrDefault() + uint64(i)
	}
	reach := (sp.Slots-1)*sp.Step + uint64(s.Size)
	for j, r := range peer {
		if r.Len < reach || r.Addr+r.Len < r.Addr {
			return nil, fmt.Errorf("peer's region MR %d (%d bytes at 0x%x) cannot hold %d slots %d bytes apart of %d-byte messages", j, r.Len, r.Addr, sp.Slots, sp.Step, s.Size)
		}
		sp.Targets = append(sp.Targets, verbs.RemoteMR{Addr: r.Addr, Len: r.Len, RKey: r.RKey})
	}
	return sp, nil
}
