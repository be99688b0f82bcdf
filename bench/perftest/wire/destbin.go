package wire

import "encoding/binary"

// With -R perftest carries the whole exchange as messages on an RC QP
// that rdma_cm connected (perftest's "rdma_cm" data exchange method): each
// step as one SEND of the same bytes as over TCP, except the per-QP
// record, which is perftest's struct pingpong_dest in binary (its
// rdma_write_keys): LID, out_reads, QPN, PSN and RKey as big-endian 32-bit
// integers, 4 bytes of padding, VAddr big-endian 64-bit, the 16 GID bytes,
// then SRQN and the GID index (32-bit, sent in big-endian order and read
// back unswapped: perftest ignores them), DestBinLen bytes in all as a
// 64-bit Linux build lays the struct out.

// DestBinLen is the binary record's size (sizeof(struct pingpong_dest) in
// perftest 6.x on 64-bit Linux).
const DestBinLen = 56

// EncodeBinary returns the record in perftest's binary form (DestBinLen
// bytes).
func (d Dest) EncodeBinary() ([]byte, error) {
	if d.QPN > 0xffffff || d.PSN > 0xffffff {
		return nil, outOfRange("dest", "QPN 0x%x or PSN 0x%x is wider than 24 bits", d.QPN, d.PSN)
	}
	b := make([]byte, DestBinLen)
	be := binary.BigEndian
	be.PutUint32(b[0:], uint32(d.LID))
	be.PutUint32(b[4:], uint32(d.OutReads))
	be.PutUint32(b[8:], d.QPN)
	be.PutUint32(b[12:], d.PSN)
	be.PutUint32(b[16:], d.RKey)
	be.PutUint64(b[24:], d.VAddr)
	copy(b[32:48], d.GID[:])
	be.PutUint32(b[48:], d.SRQN)
	return b, nil
}

// ParseBinary reads a binary record of at least DestBinLen bytes (a newer
// perftest's struct may be longer: the fields read here come first);
// field prefixes errors.
func ParseBinary(b []byte, field string) (Dest, error) {
	if len(b) < DestBinLen {
		return Dest{}, malformed(field, "%d bytes, want at least %d (perftest's binary struct pingpong_dest)", len(b), DestBinLen)
	}
	be := binary.BigEndian
	u := func(off int) uint32 { return be.Uint32(b[off:]) }
	for _, f := range []struct {
		name string
		off  int
		bits uint
	}{{"LID", 0, 16}, {"out_reads", 4, 16}, {"QPN", 8, 24}, {"PSN", 12, 24}} {
		if v := u(f.off); v>>f.bits != 0 {
			return Dest{}, outOfRange(field+": "+f.name, "0x%x is wider than %d bits", v, f.bits)
		}
	}
	d := Dest{LID: uint16(u(0)), OutReads: uint16(u(4)), QPN: u(8), PSN: u(12), RKey: u(16), VAddr: be.Uint64(b[24:]), SRQN: u(48)}
	copy(d.GID[:], b[32:48])
	return d, nil
}
