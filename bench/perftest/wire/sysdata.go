package wire

import "encoding/binary"

// Bounds on the system data a peer may announce: both are powers of two,
// and the larger value wins on both sides, so a peer must not be able to
// make this side allocate without bound.
const (
	MaxCycleBuffer   = 1 << 30 // perftest's cycle buffer is a page size or -b's/--mmap's buffer
	MaxCacheLineSize = 4096
)

// SysData is step 2 of the exchange: perftest's cycle-buffer size (the
// buffer each QP's data lives in, the page size by default) and the CPU's
// cache-line size, both in bytes.
type SysData struct {
	CycleBuffer   int32
	CacheLineSize int32
}

// EncodeInt32 is a big-endian int32, the encoding of each system-data
// field and of the negotiation version.
func EncodeInt32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

// ParseCycleBuffer reads the peer's cycle-buffer size.
func ParseCycleBuffer(b []byte) (int32, error) {
	return parsePow2("sys data: cycle buffer", b, MaxCycleBuffer)
}

// ParseCacheLine reads the peer's cache-line size.
func ParseCacheLine(b []byte) (int32, error) {
	return parsePow2("sys data: cache line size", b, MaxCacheLineSize)
}

func parsePow2(field string, b []byte, max int32) (int32, error) {
	if len(b) != 4 {
		return 0, malformed(field, "%d bytes, want 4", len(b))
	}
	v := int32(binary.BigEndian.Uint32(b))
	if v <= 0 || v > max || v&(v-1) != 0 {
		return 0, outOfRange(field, "%d: want a power of two from 1 to %d", v, max)
	}
	return v, nil
}

// Merge returns what both sides use: the larger of each value.
func (s SysData) Merge(peer SysData) SysData {
	return SysData{CycleBuffer: max(s.CycleBuffer, peer.CycleBuffer), CacheLineSize: max(s.CacheLineSize, peer.CacheLineSize)}
}
