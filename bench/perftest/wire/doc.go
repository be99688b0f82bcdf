// Package wire speaks perftest's out-of-band exchange (docs/perftest.md,
// "perftest's wire protocol"): the TCP conversation between a perftest
// client and server before, between and after the timed loops. Pure Go:
// bytes in, bytes out, no device and no cgo; the drop-in
// (cmd/rdmabench) puts real QPs behind it.
//
// The exchange, in order (every step is one swap: the client writes
// first and then reads, the server reads first and then writes, as
// perftest's ctx_xchg_data does):
//
//  1. version: 16 bytes, a NUL-padded ASCII version such as "6.06"; the
//     drop-in announces 6.29 (OurVersion); peers older than 5.70 are
//     refused (Version, MinVersion), and a failed step against a peer newer
//     than 6.29 names both versions.
//  2. system data (peer >= 5.32): the cycle-buffer size and the cache-line
//     size, each a big-endian int32; each side keeps the larger value
//     (SysData).
//  3. MTU (peer >= 5.1): the active MTU as perftest's enum ibv_mtu
//     (1 = 256 ... 5 = 4096) in decimal ASCII, 2 bytes (peer >= 5.31) or
//     4; each side uses the smaller of the two (MTU).
//  4. parameter negotiation (peer >= 6.28): a fixed binary record with a
//     raw struct ibv_device_attr (Params.EncodeLegacy, filled as perftest
//     fills it by Test.Params); the fields are compared one by one and
//     every difference is named (Compare, Mismatch); perftest lowers its
//     outstanding reads to the device attributes' max_qp_rd_atom.
//  5. per QP, the destination record (Dest): LID, outstanding reads, QPN,
//     PSN, RKey, VAddr, [GID,] SRQ number as colon-separated hex, 59
//     bytes without a GID and 108 with one, NUL-terminated; with -R a
//     binary struct of 56 bytes, 64 from 6.29 on (destbin.go). The same
//     record serves as the barrier after the QPs reach RTR, between the
//     sizes of -a, and as the closing handshake.
//  6. bandwidth tests: the client's report (BWReport) travels to the
//     server field by field.
//
// Every read has a deadline (Conn.Timeout); a short read, a malformed
// field or a value out of range is an *Error naming the field.
//
// testdata/exchanges holds exchanges recorded against perftest 6.06, 6.28
// and 6.29 in the test guest (Recording); replay_test.go feeds what
// perftest sent to this package.
package wire
