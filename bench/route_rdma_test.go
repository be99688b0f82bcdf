package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestRDMADeviceByRoute: with no --ib-dev, both sides take the device whose
// GID table holds their end of the control connection: rxe1 (dummy0,
// 192.0.2.1) for a connection over 192.0.2.1, rxe0 (lo) over 127.0.0.1, and
// the document carries both environments with the reason.
func TestRDMADeviceByRoute(t *testing.T) {
	requireDevice(t)
	for _, tc := range []struct{ ip, dev string }{{"192.0.2.1", "rxe1"}, {"127.0.0.1", "rxe0"}} {
		addr := startServerOn(t, tc.ip)
		specs := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 200}})
		cfg := runCfg(specs)
		cfg.Client.Device = ""
		cfg.ConnTimeout = 10 * time.Second
		doc, err := RunClient(context.Background(), addr, cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.ip, err)
		}
		checkDoc(t, doc, specs)
		if doc.Env.Device != tc.dev || !strings.Contains(doc.Env.DeviceReason, "by route: "+tc.dev) {
			t.Errorf("%s: client device %s (%q), want %s by route", tc.ip, doc.Env.Device, doc.Env.DeviceReason, tc.dev)
		}
		if s := doc.ServerEnv; s == nil || s.Device != tc.dev || !strings.Contains(s.DeviceReason, "by route: "+tc.dev) || s.GID != "::ffff:"+tc.ip {
			t.Errorf("%s: server environment %+v, want %s by route with GID ::ffff:%s", tc.ip, s, tc.dev, tc.ip)
		}
		if !strings.Contains(doc.Env.SoftwareRDMANote, "both ends on "+tc.dev) {
			t.Errorf("%s: banner %q", tc.ip, doc.Env.SoftwareRDMANote)
		}
	}
}
