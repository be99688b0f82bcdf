package faults

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/bench/proto"
)

// Memory and QP bombs: tests over the server's --max-memory or --max-qps
// are refused with the figures before anything is mapped, the server
// lives on and serves the next client; loopback says what it would need.

func init() {
	register(
		Case{Group: "budget", Name: "20-clients-16x256M-write-bw", Run: func(t *Fx) error {
			srv, err := t.Server("--max-memory", "512M")
			if err != nil {
				return err
			}
			if err := srv.WaitOutput("budget: --max-memory 512 MiB, --max-qps", 2*time.Second); err != nil {
				return fmt.Errorf("the start log does not state the budget: %w", err)
			}
			bomb := rawSpec{"op": "write", "mode": "bw", "size_bytes": 256 << 20, "qps": 16}
			for i := 0; i < 20; i++ {
				msg, err := rawTest(t, bomb)
				if err != nil {
					return fmt.Errorf("client %d: %w", i+1, err)
				}
				for _, want := range []string{"write bw 16 QPs x 256 MiB needs 8.0 GiB", "on the server; its --max-memory is 512 MiB"} {
					if !strings.Contains(msg, want) {
						return fmt.Errorf("client %d: refusal %q lacks %q", i+1, msg, want)
					}
				}
			}
			if srv.Exited() {
				return fmt.Errorf("the server died")
			}
			return t.Serves()
		}},
		Case{Group: "budget", Name: "cli-clients-refused-memory-and-qps", Run: func(t *Fx) error {
			if _, err := t.Server("--max-memory", "4M", "--max-qps", "4"); err != nil {
				return err
			}
			port := fmt.Sprint(t.Port())
			if err := t.ExpectExit(3, 8*time.Second, []string{"write bw 2 QPs x 1 MiB needs 5.0 MiB", "on the server; its --max-memory is 4 MiB"},
				"run", "127.0.0.1", "-p", port, "--op", "write", "--mode", "bw", "--qps", "2", "--size", "1M", "--iters", "100"); err != nil {
				return err
			}
			if err := t.ExpectExit(3, 8*time.Second, []string{"send lat 1 QP x 2 B + 4 load QPs x 4 KiB needs 5 QPs on the server; its --max-qps is 4"},
				"run", "127.0.0.1", "-p", port, "--op", "send", "--mode", "lat", "--load-qps", "4", "--load-size", "4K", "--iters", "100"); err != nil {
				return err
			}
			return t.Serves()
		}},
		Case{Group: "budget", Name: "qp-bomb-raw-64x64", Run: func(t *Fx) error {
			srv, err := t.Server("--max-qps", "16")
			if err != nil {
				return err
			}
			for _, s := range []rawSpec{
				{"op": "write", "mode": "bw", "size_bytes": 4096, "qps": 64},
				{"op": "send", "mode": "lat", "size_bytes": 2, "load": map[string]any{"qps": 64, "op": "write", "size_bytes": 1 << 30, "tx_depth": 128, "cq_mod": 1}},
			} {
				msg, err := rawTest(t, s)
				if err != nil {
					return err
				}
				if !strings.Contains(msg, "its --max-qps is 16") {
					return fmt.Errorf("refusal %q lacks the QP limit", msg)
				}
			}
			if srv.Exited() {
				return fmt.Errorf("the server died")
			}
			return t.Serves()
		}},
		Case{Group: "budget", Name: "loopback-1G-bw", Run: func(t *Fx) error {
			return t.ExpectExit(3, 3*time.Second, []string{"write bw 1 QP x 1 GiB needs 4.0 GiB", "in this process", "MemAvailable"},
				"loopback", "--op", "write", "--mode", "bw", "--size", "1G")
		}},
		Case{Group: "budget", Name: "loopback-over-max-memory", Run: func(t *Fx) error {
			return t.ExpectExit(3, 3*time.Second, []string{"send bw 1 QP x 64 MiB needs 257", "--max-memory is 100 MiB"},
				"loopback", "--op", "send", "--mode", "bw", "--size", "64M", "--max-memory", "100M")
		}},
	)
}

// rawSpec is a test as a hostile client sends it (spec.Spec's JSON),
// filled with valid defaults by rawTest.
type rawSpec map[string]any

// rawTest plays a client that ignores its own budget: hello, one test and
// its QP information, then the server's answer, which must be a refusal;
// it returns the refusal's message. The session must stay in step: bye.
func rawTest(t *Fx, s rawSpec) (string, error) {
	spec := rawSpec{"iterations": 100, "warmup_iterations": 0, "tx_depth": 128, "cq_mod": 1, "rx_depth": 512}
	if s["mode"] == "lat" {
		spec["tx_depth"] = 1
	}
	for k, v := range s {
		spec[k] = v
	}
	nc, err := net.DialTimeout("tcp", t.Addr("127.0.0.1"), 5*time.Second)
	if err != nil {
		return "", err
	}
	c := proto.NewConn(nc, 10*time.Second)
	defer c.Close()
	if err := c.Send(proto.MsgHello, proto.Hello{Version: proto.Version, Tool: "faults"}); err != nil {
		return "", err
	}
	var ack proto.HelloAck
	if err := c.Recv(proto.MsgHelloAck, &ack); err != nil {
		return "", fmt.Errorf("handshake: %w", err)
	}
	if err := c.Send(proto.MsgTest, spec); err != nil {
		return "", err
	}
	if err := c.Send(proto.MsgQPInfo, proto.QPInfo{}); err != nil {
		return "", err
	}
	err = c.Recv(proto.MsgQPInfo, nil)
	var re *proto.RemoteError
	if err == nil || !errors.As(err, &re) {
		return "", fmt.Errorf("test %v answered with %v, want a refusal", s, err)
	}
	if re.Code != "budget" {
		return "", fmt.Errorf("refusal %q has code %q, want budget", re.Msg, re.Code)
	}
	c.Send(proto.MsgBye, nil)
	for { // until the server ends the session (and frees its lock for the next client)
		if _, _, err := c.RecvAny(5 * time.Second); err != nil {
			break
		}
	}
	return re.Msg, nil
}
