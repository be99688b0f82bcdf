package mesh

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/mesh/boot"
	"github.com/rdmabench/rdmabench/bench/result"
)

// Config is one rank's part of a mesh run. Every rank gets the same flags.
type Config struct {
	Boot    boot.Bootstrap
	Pattern string
	Root    int // all-to-one's target
	Specs   []bench.Spec
	// Client is the client side of every pair (device, RDMA port, GID
	// index, run options); its Device is replaced by DeviceMap's entry.
	Client bench.ClientConfig
	// DeviceMap maps the local rank (index among the ranks on one host) to
	// a device, modulo its length; empty: device by route.
	DeviceMap []string
	Net       netip.Prefix // the control network; invalid: the default route's
	// Port is the first TCP port of this host's servers (local rank l's
	// slot s listens on Port + l*slots + s); 0: ephemeral ports.
	Port int
	// RoundTimeout bounds one pair's tests and one launcher barrier. A
	// barrier that times out ends the synchronised rounds.
	RoundTimeout time.Duration
	ConnTimeout  time.Duration
	CommandLine  []string
	Log          io.Writer // progress lines (nil: none)
}

// rankInfo is what each rank tells the others through the launcher.
type rankInfo struct {
	Rank      int    `json:"rank"`
	Host      string `json:"host"`
	Addr      string `json:"addr"`
	LocalRank int    `json:"local_rank"`
	Ports     []int  `json:"ports,omitempty"`
	Device    string `json:"device,omitempty"`
	Collector string `json:"collector,omitempty"` // rank 0
	Key       []byte `json:"key,omitempty"`       // rank 0: the run key
}

// Outcome is one rank's end of the run.
type Outcome struct {
	Doc   *result.MeshDocument // rank 0 only
	Own   []result.MeshPair    // the pairs this rank ran as client
	Error error                // a rank-level failure (report not delivered, ...)
}

// Partial reports whether this rank saw any failure.
func (o *Outcome) Partial() bool {
	if o.Error != nil {
		return true
	}
	if o.Doc != nil {
		return o.Doc.Outcome != result.MeshComplete
	}
	for _, p := range o.Own {
		if p.Status != result.StatusOK {
			return true
		}
	}
	return false
}

// Run runs this rank's part: servers up, rounds, report to rank 0; rank 0
// also collects every report and builds the document. An error means the
// rank could not take part at all (bootstrap, device, listen).
func Run(ctx context.Context, cfg Config) (*Outcome, error) {
	start := time.Now()
	b := cfg.Boot
	rank, n := b.Rank(), b.Size()
	logf := func(format string, a ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "mesh rank %d: "+format+"\n", append([]any{rank}, a...)...)
		}
	}
	rounds, err := Schedule(cfg.Pattern, n, cfg.Root)
	if err != nil {
		return nil, err
	}
	ip, err := ControlAddr(cfg.Net)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	bootCtx, cancel := context.WithTimeout(ctx, cfg.RoundTimeout)
	defer cancel()
	me := rankInfo{Rank: rank, Host: host, Addr: ip.String()}
	var col *collector
	if rank == 0 {
		// The run key: it authenticates the reports to rank 0 and every
		// pair's control session (authKey below).
		me.Key = make([]byte, 32)
		rand.Read(me.Key) //nolint:errcheck // crypto/rand does not fail on Linux
		cln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
		if err != nil {
			return nil, fmt.Errorf("mesh: collector: %w", err)
		}
		me.Collector = cln.Addr().String()
		col = newCollector(cln, me.Key, n)
		go col.serve()
		defer cln.Close()
	}
	all, err := gather(bootCtx, b, "host", me)
	if err != nil {
		return nil, err
	}
	// authKey is rank 0's run key, shared through the launcher: every
	// pair's control session proves it (bench.ServerConfig.AuthKey and
	// bench.ClientConfig.AuthKey; see startServers and runPair).
	authKey := all[0].Key
	me.Key, me.Collector = nil, ""
	for _, o := range all[:rank] {
		if o.Host == host {
			me.LocalRank++
		}
	}
	if len(cfg.DeviceMap) > 0 {
		me.Device = cfg.DeviceMap[me.LocalRank%len(cfg.DeviceMap)]
	}
	slots := Inbound(rounds, rank)
	srvs, lns, err := startServers(ctx, cfg, ip, me, slots, authKey)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, s := range srvs {
			s.stop()
		}
	}()
	for _, ln := range lns {
		me.Ports = append(me.Ports, ln.Addr().(*net.TCPAddr).Port)
	}
	collectorAddr := all[0].Collector
	if all, err = gather(bootCtx, b, "info", me); err != nil {
		return nil, err
	}
	cancel()

	rep := Report{Rank: rank, UnsyncedFrom: -1}
	for ri, round := range rounds {
		if rep.UnsyncedFrom < 0 && ri > 0 {
			bctx, bcancel := context.WithTimeout(ctx, cfg.RoundTimeout)
			err := b.Barrier(bctx)
			bcancel()
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				rep.UnsyncedFrom = ri
				w := fmt.Sprintf("launcher barrier before round %d failed (%v): the remaining rounds run unsynchronised", ri, err)
				rep.Warnings = append(rep.Warnings, w)
				logf("%s", w)
			}
		}
		for i, p := range round {
			if p.Client != rank {
				continue
			}
			srv := all[p.Server]
			slot := ServerSlot(round, i)
			mp := result.MeshPair{Round: ri, Client: rank, Server: p.Server, ClientHost: host, ServerHost: srv.Host}
			logf("round %d/%d: %s(%d) → %s(%d)", ri+1, len(rounds), host, rank, srv.Host, p.Server)
			runPair(ctx, cfg, me, srv, slot, authKey, &mp)
			if rep.Env == nil && mp.Env != nil {
				rep.Env = mp.Env
			}
			if mp.Status != result.StatusOK {
				logf("pair %s failed: %s", mp.Name(), mp.Error)
			}
			rep.Pairs = append(rep.Pairs, mp)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	out := &Outcome{Own: rep.Pairs}
	// In step the others end with rank 0: the longest wait is a test
	// of theirs still running, bounded by the round timeout.
	wait := cfg.RoundTimeout + min(cfg.RoundTimeout, 10*time.Second)
	if rank != 0 {
		dctx, dcancel := context.WithTimeout(ctx, wait)
		defer dcancel()
		if err := deliver(dctx, collectorAddr, authKey, rep); err != nil {
			out.Error = fmt.Errorf("mesh: report to rank 0 at %s: %w", collectorAddr, err)
		}
		b.Close()
		return out, nil
	}
	col.add(rep)
	cctx, ccancel := context.WithTimeout(ctx, wait)
	defer ccancel()
	reports := col.wait(cctx)
	b.Close()
	out.Doc = assemble(cfg, start, b.Launcher(), rounds, all, reports)
	return out, nil
}

// gather is Allgather of rankInfo.
func gather(ctx context.Context, b boot.Bootstrap, name string, me rankInfo) ([]rankInfo, error) {
	data, err := json.Marshal(me)
	if err != nil {
		return nil, err
	}
	raw, err := b.Allgather(ctx, name, data)
	if err != nil {
		return nil, fmt.Errorf("mesh: bootstrap (%s): %w", name, err)
	}
	out := make([]rankInfo, len(raw))
	for i, v := range raw {
		if err := json.Unmarshal(v, &out[i]); err != nil || out[i].Rank != i {
			return nil, fmt.Errorf("mesh: bootstrap (%s): rank %d's value is not a rank record: %q", name, i, v)
		}
	}
	return out, nil
}

// server is one bench.Server serving one listener.
type server struct {
	srv    *bench.Server
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *server) stop() {
	s.cancel()
	<-s.done
	s.srv.Close()
}

// startServers opens slots servers bound to ip (never the wildcard).
// Their clients must prove the run key authKey. Bound to one address, they
// are Exposed as with --bind.
func startServers(ctx context.Context, cfg Config, ip netip.Addr, me rankInfo, slots int, authKey []byte) ([]*server, []net.Listener, error) {
	var srvs []*server
	var lns []net.Listener
	fail := func(err error) ([]*server, []net.Listener, error) {
		for _, s := range srvs {
			s.stop()
		}
		return nil, nil, err
	}
	for s := range slots {
		port := 0
		if cfg.Port > 0 {
			port = cfg.Port + me.LocalRank*slots + s
		}
		srv, err := bench.NewServer(bench.ServerConfig{Device: me.Device, Port: cfg.Client.Port,
			GIDIndex: cfg.Client.GIDIndex, Log: log.New(io.Discard, "", 0), AuthKey: authKey, Exposed: true})
		if err != nil {
			return fail(fmt.Errorf("mesh: server: %w", err))
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
		if err != nil {
			srv.Close()
			return fail(fmt.Errorf("mesh: server: %w", err))
		}
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		sv := &server{srv: srv, cancel: cancel, done: make(chan struct{})}
		go func() {
			defer close(sv.done)
			srv.Serve(sctx, ln) //nolint:errcheck // ends when stopped
		}()
		srvs = append(srvs, sv)
		lns = append(lns, ln)
	}
	return srvs, lns, nil
}

// runPair runs the test list against srv's server in slot and fills mp.
// The session proves the run key authKey.
func runPair(ctx context.Context, cfg Config, me, srv rankInfo, slot int, authKey []byte, mp *result.MeshPair) {
	mp.Start = time.Now()
	defer func() { mp.End = time.Now() }()
	mp.Status = result.StatusFailed
	if slot >= len(srv.Ports) {
		mp.Error = fmt.Sprintf("rank %d has no server slot %d", srv.Rank, slot)
		return
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.RoundTimeout)
	defer cancel()
	cc := cfg.Client
	cc.Device, cc.AuthKey = me.Device, authKey
	addr := net.JoinHostPort(srv.Addr, strconv.Itoa(srv.Ports[slot]))
	doc, err := bench.RunClient(pctx, addr, bench.RunConfig{Client: cc, Specs: cfg.Specs,
		ConnTimeout: min(cfg.ConnTimeout, cfg.RoundTimeout), CommandLine: cfg.CommandLine})
	if doc != nil {
		env := doc.Env
		mp.Env, mp.ServerEnv, mp.Results, mp.Warnings = &env, doc.ServerEnv, doc.Results, doc.Warnings
		if env.Host == "" && env.Device == "" {
			mp.Env = nil
		}
	}
	if err != nil {
		if errors.Is(pctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("timed out after %v (--round-timeout): %w", cfg.RoundTimeout, err)
		}
		mp.Error = err.Error()
		return
	}
	mp.Status = result.StatusOK
}
