package wire

import "encoding/binary"

// With -R perftest carries the whole exchange as messages on an RC QP
// that rdma_cm connected (perftest's "rdma_cm" data exchange method): each
// step as one SEND of the same bytes as over TCP, except the per-QP
// record, which is perftest's struct pingpong_dest in binary (its
// rdma_write_keys): LID, out_reads, QPN, PSN and RKey as big-endian 32-bit
// integers, 4 bytes of padding, VAddr big-endian 64-bit, from 6.29 on
// tail_markers_vaddr big-endian 64-bit (data validation; 0 here), the 16
// GID bytes, then SRQN and the GID index (32-bit, sent in big-endian order
// and read back unswapped: perftest ignores them), as a 64-bit Linux build
// lays the struct out: DestBinLen bytes, DestBinLen629 from 6.29 on.

// The binary record's sizes (sizeof(struct pingpong_dest) on 64-bit
// Linux).
const (
	DestBinLen    = 56 // perftest 6.x before 6.29
	DestBinLen629 = 64 // 6.29: tail_markers_vaddr after VAddr
)

// DestBinLenFor is the size of the binary record a peer of version v
// sends and reads.
func DestBinLenFor(v Version) int {
	if v.AtLeast(TailMarkerVersion) {
		return DestBinLen629
	}
	return DestBinLen
}

// gidOff is where the GID starts in a record of n bytes.
func gidOff(n int) int { return 32 + n - DestBinLen }

// EncodeBinary returns the record in perftest's binary form, n bytes
// (DestBinLen or DestBinLen629).
func (d Dest) EncodeBinary(n int) ([]byte, error) {
	if n != DestBinLen && n != DestBinLen629 {
		return nil, outOfRange("dest", "binary record of %d bytes: want %d or %d", n, DestBinLen, DestBinLen629)
	}
	if d.QPN > 0xffffff || d.PSN > 0xffffff {
		return nil, outOfRange("dest", "QPN 0x%x or PSN 0x%x is wider than 24 bits", d.QPN, d.PSN)
	}
	b := make([]byte, n)
	be := binary.BigEndian
	be.PutUint32(b[0:], uint32(d.LID))
	be.PutUint32(b[4:], uint32(d.OutReads))
	be.PutUint32(b[8:], d.QPN)
	be.PutUint32(b[12:], d.PSN)
	be.PutUint32(b[16:], d.RKey)
	be.PutUint64(b[24:], d.VAddr)
	g := gidOff(n)
	copy(b[g:g+16], d.GID[:])
	be.PutUint32(b[g+16:], d.SRQN)
	return b, nil
}

// ParseBinary reads a binary record of DestBinLen or DestBinLen629 bytes
// (its size tells the layout); field prefixes errors.
func ParseBinary(b []byte, field string) (Dest, error) {
	if len(b) != DestBinLen && len(b) != DestBinLen629 {
		return Dest{}, malformed(field, "%d bytes, want %d (perftest before 6.29) or %d (6.29) (perftest's binary struct pingpong_dest)", len(b), DestBinLen, DestBinLen629)
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
	g := gidOff(len(b))
	d := Dest{LID: uint16(u(0)), OutReads: uint16(u(4)), QPN: u(8), PSN: u(12), RKey: u(16), VAddr: be.Uint64(b[24:]), SRQN: u(g + 16)}
	copy(d.GID[:], b[g:g+16])
	return d, nil
}
