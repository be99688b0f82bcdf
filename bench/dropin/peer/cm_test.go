package peer

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestPerftestCMLoopback: -R towards a loopback address is refused before
// anything is opened, naming the address and what to use instead (rdma_cm
// resolves no loopback address); and Run refuses -R over a TCP
// connection (perftest 6.06's -R exchange runs over rdma_cm).
func TestPerftestCMLoopback(t *testing.T) {
	_, err := DialPerftestCM(context.Background(), netip.MustParseAddrPort("127.0.0.1:18515"), "", -1, time.Second)
	if !errors.Is(err, ErrPerftestUnsupported) || !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "-R") ||
		!strings.Contains(err.Error(), "192.0.2.1") {
		t.Errorf("DialPerftestCM to 127.0.0.1: %v", err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	_, err = Run(context.Background(), a, Config{Client: true, Spec: spec.Spec{Op: "write", Mode: "bw", Size: 64, Iters: 10, RDMACM: true}})
	if !errors.Is(err, ErrPerftestUnsupported) || !strings.Contains(err.Error(), "-R needs perftest's rdma_cm channel") {
		t.Errorf("Run -R over TCP: %v", err)
	}
}
