package endpoint

import (
	"encoding/json"
	"testing"

	"github.com/rdmabench/rdmabench/bench/proto"
)

// FuzzQPInfoDecode: peer QP information is decoded strictly and its GID
// parsed without panics.
func FuzzQPInfoDecode(f *testing.F) {
	b, _ := json.Marshal(proto.QPInfo{QPN: 0x11, PSN: 0x123456, GID: "::ffff:127.0.0.1", GIDIndex: 1, GIDType: "RoCE v2",
		LinkLayer: "Ethernet", ActiveMTU: 4096, MaxRdAtomic: 16, RKey: 0x1234, Addr: 0x7f0000000000, Len: 4096})
	f.Add(b)
	f.Add([]byte(`{"gid":"zz","len":18446744073709551615,"addr":18446744073709551615}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c proto.Conn
		var q proto.QPInfo
		if err := c.Decode(proto.MsgQPInfo, b, &q); err != nil {
			return
		}
		if err := CheckPeerBuffer(q, 4096); err == nil && (q.Len < 4096 || q.Addr+q.Len < q.Addr) {
			t.Fatalf("accepted a peer buffer of %d bytes at 0x%x", q.Len, q.Addr)
		}
	})
}
