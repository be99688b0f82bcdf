package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Authentication and exposure: the shared key, protected mode, --allow.
// Non-loopback clients dial dummy0's address (192.0.2.1, rxe1) in the guest.

const wireIP = "192.0.2.1"

func init() {
	register(
		Case{Group: "auth", Name: "wrong-key-refused-nothing-allocated", Parallel: true, Run: wrongKey},
		Case{Group: "auth", Name: "protected-mode-non-loopback", Parallel: true, Run: func(t *Fx) error {
			if _, err := t.Server(); err != nil { // no key, no --bind
				return err
			}
			if err := t.ExpectExit(4, 10*time.Second, []string{"protected mode", wireIP, "--bind ADDR", "--auth-key-file"},
				t.client(wireIP)...); err != nil {
				return err
			}
			c, err := t.hello() // loopback clients still get a session
			if err != nil {
				return err
			}
			return c.Close()
		}},
		Case{Group: "auth", Name: "key-both-sides", Parallel: true, Run: func(t *Fx) error {
			key, err := t.keyFile("k", "shared-secret-0123456789")
			if err != nil {
				return err
			}
			if _, err := t.Server("--auth-key-file", key); err != nil { // no --bind: the key opens it
				return err
			}
			// the client takes its key from the environment
			cmd := t.Command(t.bin, t.client(wireIP)...)
			cmd.Env = append(os.Environ(), "RDMABENCH_AUTH_KEY=shared-secret-0123456789")
			p, err := t.StartCmd("client", cmd)
			if err != nil {
				return err
			}
			if code, _ := p.Wait(30 * time.Second); code != 0 {
				return fmt.Errorf("client with the server's key (from RDMABENCH_AUTH_KEY): exit %d:\n%s", code, indent(p.Output()))
			}
			return nil
		}},
		Case{Group: "auth", Name: "key-on-client-only", Parallel: true, Run: func(t *Fx) error {
			key, err := t.keyFile("k", "shared-secret-0123456789")
			if err != nil {
				return err
			}
			srv, err := t.serverOn(wireIP)
			if err != nil {
				return err
			}
			if err := t.ExpectExit(4, 10*time.Second, []string{"this server has none"}, append(t.client(wireIP), "--auth-key-file", key)...); err != nil {
				return err
			}
			return srv.WaitOutput("this server has none", 2*time.Second)
		}},
		Case{Group: "auth", Name: "key-on-server-only", Parallel: true, Run: func(t *Fx) error {
			key, err := t.keyFile("k", "shared-secret-0123456789")
			if err != nil {
				return err
			}
			srv, err := t.Server("--auth-key-file", key)
			if err != nil {
				return err
			}
			if err := t.ExpectExit(4, 10*time.Second, []string{"requires a key", "--auth-key-file"}, t.client("127.0.0.1")...); err != nil {
				return err
			}
			return srv.WaitOutput("requires a key", 2*time.Second)
		}},
		Case{Group: "auth", Name: "allow-refuses", Parallel: true, Run: func(t *Fx) error {
			srv, err := t.serverOn(wireIP, "--allow", "10.0.0.0/8,127.0.0.1")
			if err != nil {
				return err
			}
			if err := t.ExpectExit(4, 10*time.Second, []string{wireIP + " is not in the server's --allow list"}, t.client(wireIP)...); err != nil {
				return err
			}
			if err := srv.WaitOutput("refused (not-allowed)", 2*time.Second); err != nil {
				return err
			}
			return t.ExpectExit(2, 5*time.Second, []string{`--allow "10.0.0.0/33"`}, "server", "-p", fmt.Sprint(t.Port()+1000), "--allow", "10.0.0.0/33")
		}},
		Case{Group: "auth", Name: "bad-key-files", Parallel: true, Run: func(t *Fx) error {
			open, err := t.keyFile("open", "shared-secret-0123456789")
			if err != nil {
				return err
			}
			os.Chmod(open, 0o644)
			empty, err := t.keyFile("empty", "\n")
			if err != nil {
				return err
			}
			for _, c := range []struct {
				cmd        []string
				file, says string
			}{
				{[]string{"server", "-p", fmt.Sprint(t.Port())}, open, "chmod 600"},
				{[]string{"server", "-p", fmt.Sprint(t.Port())}, empty, "empty key"},
				{t.client("127.0.0.1"), filepath.Join(t.TempDir(), "no-such-key"), "no such file"},
				{t.client("127.0.0.1"), open, "chmod 600"},
			} {
				if err := t.ExpectExit(2, 5*time.Second, []string{"--auth-key-file", c.says}, append(c.cmd, "--auth-key-file", c.file)...); err != nil {
					return fmt.Errorf("%s with key file %s: %w", c.cmd[0], filepath.Base(c.file), err)
				}
			}
			return nil
		}},
	)
}

// wrongKey: a client with another key is refused on both sides, and the
// server allocates nothing for it: no session line in its log, no new
// uverbs context (a client from 192.0.2.1 would make it open rxe1).
func wrongKey(t *Fx) error {
	good, err := t.keyFile("good", "the-right-key-0123456789")
	if err != nil {
		return err
	}
	bad, err := t.keyFile("bad", "the-wrong-key-0123456789")
	if err != nil {
		return err
	}
	srv, err := t.serverOn(wireIP, "--auth-key-file", good)
	if err != nil {
		return err
	}
	before, err := uverbsFDs(srv)
	if err != nil {
		return err
	}
	if err := t.ExpectExit(4, 10*time.Second, []string{"authentication failed"}, append(t.client(wireIP), "--auth-key-file", bad)...); err != nil {
		return err
	}
	if err := srv.WaitOutput("authentication failed", 2*time.Second); err != nil {
		return err
	}
	after, err := uverbsFDs(srv)
	if err != nil {
		return err
	}
	if strings.Contains(srv.Output(), "connected") || after != before {
		return fmt.Errorf("the server allocated for a client with the wrong key: uverbs fds %d -> %d; log:\n%s", before, after, indent(srv.Output()))
	}
	// the right key gets in (and the same count would now grow: the check can fail)
	code, out, _ := t.Run(30*time.Second, append(t.client(wireIP), "--auth-key-file", good)...)
	if code != 0 {
		return fmt.Errorf("client with the right key: exit %d:\n%s", code, indent(out))
	}
	if !strings.Contains(srv.Output(), "connected, authenticated") {
		return fmt.Errorf("no authenticated session in the server log:\n%s", indent(srv.Output()))
	}
	if n, err := uverbsFDs(srv); err != nil || n <= before {
		return fmt.Errorf("uverbs fds %d -> %d (%v) after an authenticated client from %s: the count cannot tell an allocation", before, n, err, wireIP)
	}
	return nil
}

// client is a short `run HOST` against this case's port.
func (t *Fx) client(host string) []string {
	return []string{"run", host, "-p", fmt.Sprint(t.port), "--op", "send", "--mode", "lat", "--size", "8", "--iters", "200", "--connect-timeout", "5s"}
}

// serverOn starts a server with --bind ip and waits until it listens there.
func (t *Fx) serverOn(ip string, args ...string) (*Proc, error) {
	p, err := t.Start("server", append([]string{"server", "-p", fmt.Sprint(t.port), "--bind", ip}, args...)...)
	if err != nil {
		return nil, err
	}
	if err := t.WaitListen(ip, 10*time.Second); err != nil {
		return nil, fmt.Errorf("server: %w; output:\n%s", err, p.Output())
	}
	return p, nil
}

// keyFile writes a key file of mode 0600 for this case.
func (t *Fx) keyFile(name, key string) (string, error) {
	p := filepath.Join(t.TempDir(), name)
	return p, os.WriteFile(p, []byte(key+"\n"), 0o600)
}

// pid is p's process id.
func (p *Proc) pid() int { return p.cmd.Process.Pid }

// uverbsFDs counts p's open files on /dev/infiniband/uverbs*: its device
// contexts.
func uverbsFDs(p *Proc) (int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", p.pid())
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.Contains(l, "uverbs") {
			n++
		}
	}
	return n, nil
}
