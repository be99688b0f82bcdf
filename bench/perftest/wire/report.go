package wire

import (
	"encoding/binary"
	"math"
)

// BWReport is a bandwidth test's result as perftest's xchg_bw_reports
// swaps it after the run (step 6): the unidirectional server prints the
// client's, a bidirectional side adds the peer's to its own.
type BWReport struct {
	Size       uint64  // message size, bytes
	Iters      uint64  // iterations
	BWPeak     float64 // MiB/s (Gb/s with --report_gbits)
	BWAvg      float64 // same unit
	MsgRateAvg float64 // Mpps
}

// SwapBWReport swaps reports: size and iterations as big-endian integers
// (iterations in 4 bytes for a peer older than 5.33), the figures as
// big-endian IEEE doubles, each field its own swap. A negative or NaN
// figure from the peer is an error.
func (c *Conn) SwapBWReport(ours BWReport) (BWReport, error) {
	var peer BWReport
	rb, err := c.Swap("bw report: size", binary.BigEndian.AppendUint64(nil, ours.Size), 8)
	if err != nil {
		return peer, err
	}
	peer.Size = binary.BigEndian.Uint64(rb)
	if c.Peer.AtLeast(Iters64Version) {
		rb, err = c.Swap("bw report: iters", binary.BigEndian.AppendUint64(nil, ours.Iters), 8)
		if err == nil {
			peer.Iters = binary.BigEndian.Uint64(rb)
		}
	} else {
		rb, err = c.Swap("bw report: iters", binary.BigEndian.AppendUint32(nil, uint32(ours.Iters)), 4)
		if err == nil {
			peer.Iters = uint64(binary.BigEndian.Uint32(rb))
		}
	}
	if err != nil {
		return peer, err
	}
	for _, f := range []struct {
		name string
		mine float64
		dst  *float64
	}{{"bw report: bw_peak", ours.BWPeak, &peer.BWPeak}, {"bw report: bw_avg", ours.BWAvg, &peer.BWAvg}, {"bw report: msgRate_avg", ours.MsgRateAvg, &peer.MsgRateAvg}} {
		rb, err := c.Swap(f.name, binary.BigEndian.AppendUint64(nil, math.Float64bits(f.mine)), 8)
		if err != nil {
			return peer, err
		}
		if *f.dst, err = ParseFigure(f.name, rb); err != nil {
			return peer, err
		}
	}
	return peer, nil
}

// ParseFigure reads one big-endian IEEE double of a report: finite and
// not negative.
func ParseFigure(field string, b []byte) (float64, error) {
	if len(b) != 8 {
		return 0, malformed(field, "%d bytes, want 8", len(b))
	}
	v := math.Float64frombits(binary.BigEndian.Uint64(b))
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, outOfRange(field, "%v: want a finite figure >= 0", v)
	}
	return v, nil
}
