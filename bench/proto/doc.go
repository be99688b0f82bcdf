// Package proto is rdmabench's control protocol: framing, the messages
// and their errors. Standard library only; its parsers are fuzzed.
//
// The server and the client talk over one TCP connection before and between
// RDMA tests. Every message is one frame: a 12-byte big-endian header
//
//	magic   uint32  Magic ("RDMB")
//	version uint16  Version
//	type    uint16  MsgType
//	length  uint32  payload length in bytes, at most MaxPayload
//
// followed by length bytes of JSON payload (possibly none).
package proto
