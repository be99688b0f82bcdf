package endpoint

import (
	"net"
	"testing"
	"time"

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
	if NeedOf(region, false).Registered < 1<<30 || NeedOf(region, true).Registered >= 1<<30 {
		t.Errorf("the server registers the region, the client not: %d, %d", NeedOf(region, false).Registered, NeedOf(region, true).Registered)
	}
	idle := plain
	idle.IdleQPs = 100
	if n, p := NeedOf(idle, false), NeedOf(plain, false); n.QPs != p.QPs+100 || n.Registered <= p.Registered || n.Engine != p.Engine {
		t.Errorf("100 idle QPs: need %+v, without %+v: want 100 more QPs and their buffers, no engines", n, p)
	}
	send := plain
	send.Op, send.MRs = result.OpSend, 16
	if n, p := NeedOf(send, true), NeedOf(plain, true); n.Registered != p.Registered+16*4096 || NeedOf(send, false).Registered != NeedOf(plain, false).Registered {
		t.Errorf("send over 16 MRs: the client registers %d more bytes, the server %d more; want 16 × 4 KiB and none",
			n.Registered-p.Registered, NeedOf(send, false).Registered-NeedOf(plain, false).Registered)
	}
	c.SetTimeout(0)
	if w := spread.Wait(c.Timeout(), region); w != 0 {
		t.Errorf("no deadline: %v", w)
	}
}
