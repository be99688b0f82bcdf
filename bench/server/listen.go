package server

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/rdmabench/rdmabench/bench/ctrl"
)

// exposure says in words who the server admits.
func (s *Server) exposure() string {
	var who string
	switch {
	case len(s.cfg.AuthKey) > 0:
		who = "clients that prove the key"
	case s.cfg.Exposed:
		who = "any client (no key: see --auth-key-file)"
	default:
		who = "loopback clients only (protected mode: no key and no --bind)"
	}
	if len(s.cfg.Allow) > 0 {
		who += fmt.Sprintf(", from %v only", s.cfg.Allow)
	}
	limits := fmt.Sprintf("idle timeout %v, heartbeat deadline %v", s.cfg.IdleTimeout, ctrl.HeartbeatTimeout)
	if s.cfg.MaxSession > 0 {
		limits += fmt.Sprintf(", sessions at most %v", s.cfg.MaxSession)
	}
	all, perAddr := s.maxStartups()
	limits += fmt.Sprintf(", at most %d connections in the handshake (%d per address)", all, perAddr)
	return "serving " + who + "; " + limits
}

// ListenAndServe runs `rdmabench server` on addr until ctx ends.
func ListenAndServe(ctx context.Context, addr string, cfg Config) error {
	srv, err := New(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if cfg.Log != nil {
		dev := fmt.Sprintf("device %q", srv.deviceName())
		if srv.dev != nil {
			dev = fmt.Sprintf("device %q port %d (%s)", srv.deviceName(), srv.dev.Port.Port, srv.dev.Reason)
		}
		if cfg.Device == "" && srv.dev != nil {
			dev = fmt.Sprintf("device per client, by route (else %s port %d: %s)", srv.deviceName(), srv.dev.Port.Port, srv.dev.Reason)
		}
		cfg.Log.Printf("listening on %s (%s); %s", ln.Addr(), dev, srv.exposure())
	}
	err = srv.Serve(ctx, ln)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
