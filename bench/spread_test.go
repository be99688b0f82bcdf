package bench

import (
	"net"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/endpoint"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/bench/spread"
)

// TestQPInfoWaitScalesWithRegion: the client waits for the server's QP
// information its usual deadline, plus 30 s per GiB the server registers
// (a 1 GiB --region took more than the 10 s deadline under TCG).
func TestQPInfoWaitScalesWithRegion(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := proto.NewConn(a, 10*time.Second)
	plain := spec.Spec{Op: result.OpRead, Mode: result.ModeBW, Size: 4096}.WithDefaults()
	region := plain
	region.Region, region.Access = 1<<30, spec.AccessRandom
	if w := spread.Wait(c.Timeout(), plain); w < 10*time.Second || w > 11*time.Second {
		t.Errorf("plain READ: %v, want about 10 s", w)
	}
	if w := spread.Wait(c.Timeout(), region); w < 40*time.Second || w > 41*time.Second {
		t.Errorf("1 GiB region: %v, want about 40 s", w)
	}
	if endpoint.NeedOf(region, false).Registered < 1<<30 || endpoint.NeedOf(region, true).Registered >= 1<<30 {
		t.Errorf("the server registers the region, the client not: %d, %d", endpoint.NeedOf(region, false).Registered, endpoint.NeedOf(region, true).Registered)
	}
	idle := plain
	idle.IdleQPs = 100
	if n, p := endpoint.NeedOf(idle, false), endpoint.NeedOf(plain, false); n.QPs != p.QPs+100 || n.Registered <= p.Registered || n.Engine != p.Engine {
		t.Errorf("100 idle QPs: need %+v, without %+v: want 100 more QPs and their buffers, no engines", n, p)
	}
	send := plain
	send.Op, send.MRs = result.OpSend, 16
	if n, p := endpoint.NeedOf(send, true), endpoint.NeedOf(plain, true); n.Registered != p.Registered+16*4096 || endpoint.NeedOf(send, false).Registered != endpoint.NeedOf(plain, false).Registered {
		t.Errorf("send over 16 MRs: the client registers %d more bytes, the server %d more; want 16 × 4 KiB and none",
			n.Registered-p.Registered, endpoint.NeedOf(send, false).Registered-endpoint.NeedOf(plain, false).Registered)
	}
	c.SetTimeout(0)
	if w := spread.Wait(c.Timeout(), region); w != 0 {
		t.Errorf("no deadline: %v", w)
	}
}
