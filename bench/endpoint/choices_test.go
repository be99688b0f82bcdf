package endpoint

import (
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestUseGRH: the address vector over a fake port: RoCE always has a GRH,
// InfiniBand only with a given GID (perftest -x), as perftest builds it.
func TestUseGRH(t *testing.T) {
	for _, tt := range []struct {
		link     string
		gidGiven bool
		want     bool
	}{
		{"InfiniBand", false, false}, // LID routing, no 40-byte GRH per packet
		{"InfiniBand", true, true},
		{"Ethernet", false, true},
		{"Ethernet", true, true},
	} {
		if got := useGRH(verbs.PortAttr{LinkLayer: tt.link, LID: 7}, tt.gidGiven); got != tt.want {
			t.Errorf("%s, GID given %v: GRH %v, want %v", tt.link, tt.gidGiven, got, tt.want)
		}
	}
}

// TestAddrStep: perftest's rule: bandwidth tests of messages up to half
// the cycle step by the message rounded up to a cache line; the areas
// grow to hold the cycle, and the peer is told so.
func TestAddrStep(t *testing.T) {
	defer func(old int) { spec.CacheLine = old }(spec.CacheLine)
	spec.CacheLine = 64 // the cases' steps: TestAddrStepCacheLine has others
	bw := func(op string, size int) spec.Spec {
		return spec.Spec{Op: op, Mode: result.ModeBW, Size: size, AddrCycle: 4096}
	}
	for _, tt := range []struct {
		name              string
		s                 spec.Spec
		step, cycle, area int
	}{
		{"fetch_add", bw(result.OpFetchAdd, 8), 64, 4096, 4096},
		{"write 64", bw(result.OpWrite, 64), 64, 4096, 4096},
		{"write 65", bw(result.OpWrite, 65), 128, 4096, 4096},
		{"send 2048: half the cycle", bw(result.OpSend, 2048), 2048, 4096, 4096},
		{"write 2049: above half", bw(result.OpWrite, 2049), 0, 0, 4096},
		{"64 KiB cycle", spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 64, AddrCycle: 65536}, 64, 65536, 65536},
		{"latency", spec.Spec{Op: result.OpWrite, Mode: result.ModeLat, Size: 64, AddrCycle: 4096}, 0, 0, 4096},
		{"--no-addr-step", spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 64, AddrCycle: 4096, NoAddrStep: true}, 0, 0, 4096},
		{"tcp", spec.Spec{Op: result.OpSend, Mode: result.ModeBW, Size: 64, Transport: result.TransportTCP}, 0, 0, 4096},
	} {
		step, cycle := tt.s.AddrStep()
		if step != tt.step || cycle != tt.cycle || endpointArea(tt.s) != tt.area {
			t.Errorf("%s: step %d cycle %d area %d, want %d %d %d", tt.name, step, cycle, endpointArea(tt.s), tt.step, tt.cycle, tt.area)
		}
		if want := max(tt.s.Size, tt.cycle); tt.s.TargetLen() != want {
			t.Errorf("%s: target length %d, want %d", tt.name, tt.s.TargetLen(), want)
		}
	}
	if d := (spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 64}).WithDefaults(); d.AddrCycle != spec.PageSize {
		t.Errorf("default cycle %d, want the page size %d", d.AddrCycle, spec.PageSize)
	}
	if d := (spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 64, NoAddrStep: true}).WithDefaults(); d.AddrCycle != 0 {
		t.Errorf("--no-addr-step: cycle %d", d.AddrCycle)
	}
}

// TestRecvStep: a SEND bandwidth receiver steps its receives as perftest
// does: by the receive (UD: with the GRH) rounded up to the cache line,
// for receives up to half the cycle; the result records it.
func TestRecvStep(t *testing.T) {
	defer func(old int) { spec.CacheLine = old }(spec.CacheLine)
	spec.CacheLine = 64
	bw := func(op, qp string, size int) spec.Spec {
		return spec.Spec{Op: op, Mode: result.ModeBW, Size: size, AddrCycle: 4096, QPType: qp}
	}
	for _, c := range []struct {
		name string
		s    spec.Spec
		want int
	}{
		{"send 64", bw(result.OpSend, "", 64), 64},
		{"send 65", bw(result.OpSend, "", 65), 128},
		{"send 2048: half the cycle", bw(result.OpSend, "", 2048), 2048},
		{"send 4096: no stepping", bw(result.OpSend, "", 4096), 0},
		{"UD send 64: with the GRH", bw(result.OpSend, result.QPTypeUD, 64), 128},
		{"UD send 2048: with the GRH above half the cycle", bw(result.OpSend, result.QPTypeUD, 2048), 0},
		{"write: no receives", bw(result.OpWrite, "", 64), 0},
		{"latency", spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 64, AddrCycle: 4096}, 0},
		{"--no-addr-step", spec.Spec{Op: result.OpSend, Mode: result.ModeBW, Size: 64, AddrCycle: 4096, NoAddrStep: true}, 0},
	} {
		if got := RecvStep(c.s); got != c.want {
			t.Errorf("%s: recvStep %d, want %d", c.name, got, c.want)
		}
		if got := ChoicesResult(c.s).RecvAddrStepBytes; got != c.want {
			t.Errorf("%s: choices record recv_addr_step_bytes %d, want %d", c.name, got, c.want)
		}
	}
}

// TestRecvStepServerCacheLine: the server steps its receives by its own
// cache line, which may differ from the client's; the client records the
// step the server reported (proto.QPInfo.RecvStep), its own computation
// only when the server gave none, and in a bidirectional SEND test its
// own receives' step besides.
func TestRecvStepServerCacheLine(t *testing.T) {
	defer func(old int) { spec.CacheLine = old }(spec.CacheLine)
	spec.CacheLine = 64 // the client's; the server's is 128: 129 bytes step by 256 there
	s := spec.Spec{Op: result.OpSend, Mode: result.ModeBW, Size: 129, AddrCycle: 4096}
	bi := s
	bi.Bidirectional = true
	for _, c := range []struct {
		name           string
		s              spec.Spec
		peer           int
		server, client int
	}{
		{"the server's step", s, 256, 256, 0},
		{"a server that does not say: the client's computation", s, 0, 192, 0},
		{"bidirectional: both sides' steps", bi, 256, 256, 192},
		{"write: no receives, whatever the peer says", spec.Spec{Op: result.OpWrite, Mode: result.ModeBW, Size: 129, AddrCycle: 4096}, 256, 0, 0},
	} {
		c0 := ChoicesResult(c.s, &Endpoint{peerRecvStep: c.peer})
		if c0.RecvAddrStepBytes != c.server || c0.ClientRecvAddrStepBytes != c.client {
			t.Errorf("%s: recv_addr_step_bytes %d, client_recv_addr_step_bytes %d; want %d, %d",
				c.name, c0.RecvAddrStepBytes, c0.ClientRecvAddrStepBytes, c.server, c.client)
		}
	}
}
