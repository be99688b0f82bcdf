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
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/mesh/boot"
	"github.com/rdmabench/rdmabench/bench/result"
	benchserver "github.com/rdmabench/rdmabench/bench/server"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// Config is one rank's part of a mesh run. Every rank gets the same flags.
type Config struct {
	Boot    boot.Bootstrap
	Pattern string
	Root    int // all-to-one's target
	Specs   []spec.Spec
	// Client is the client side of every pair (device, RDMA port, GID
	// index, run options); its Device is replaced by DeviceMap's entry.
	Client bench.ClientConfig
	// DeviceMap maps the local rank (index among the ranks on one host) to
	// a device, modulo its length; empty: device by route.
	DeviceMap []string
	// Rails are this rank's devices in rail order, NIC i of each host
	// paired with NIC i of the others (--rails): the schedule runs once per
	// rail, every rank serving and testing on its rail's device, and rank
	// 0 builds one document per rail. Nil: no rails (DeviceMap, or the
	// client's device, or by route).
	Rails []string
	// RailsParallel runs each round on every rail at once instead of rail
	// after rail.
	RailsParallel bool
	Net           netip.Prefix // the control network; invalid: the default route's
	// Port is the first TCP port of this host's servers (local rank l's
	// slot s listens on Port + l*slots + s; with R rails, rail r's on Port
	// + (l*R + r)*slots + s); 0: ephemeral ports.
	Port int
	// RoundTimeout bounds the bootstrap, one pair's tests and rank 0's wait
	// at a barrier (plus a slack of up to 10 s). A rank that misses a
	// barrier runs its remaining rounds unsynchronised.
	RoundTimeout time.Duration
	ConnTimeout  time.Duration
	CommandLine  []string
	Log          io.Writer // progress lines (nil: none)
	// kill, when it closes, makes the rank behave as a killed process
	// (tests only; see watchKill).
	kill <-chan struct{}
}

// rankInfo is what each rank tells the others through the launcher.
type rankInfo struct {
	Rank      int    `json:"rank"`
	Host      string `json:"host"`
	Addr      string `json:"addr"`
	LocalRank int    `json:"local_rank"`
	Ports     []int  `json:"ports,omitempty"`
	Device    string `json:"device,omitempty"`
	Collector string `json:"collector,omitempty"` // rank 0: its coordinator's address
	Key       []byte `json:"key,omitempty"`       // rank 0: the run key
	// RailDevices and RailPorts are the rank's device and server ports of
	// each rail (Config.Rails); Device and Ports are rail 0's.
	RailDevices []string `json:"rail_devices,omitempty"`
	RailPorts   [][]int  `json:"rail_ports,omitempty"`
}

// onRail is the rank as it runs on rail r: that rail's device and ports.
func (ri rankInfo) onRail(r int) rankInfo {
	if r < len(ri.RailDevices) {
		ri.Device = ri.RailDevices[r]
	}
	if r < len(ri.RailPorts) {
		ri.Ports = ri.RailPorts[r]
	}
	return ri
}

// Outcome is one rank's end of the run.
type Outcome struct {
	Doc *result.MeshDocument // rank 0 only; with rails, rail 0's
	// Rails are rank 0's documents, one per rail, with Config.Rails.
	Rails []*result.MeshDocument
	Own   []result.MeshPair // the pairs this rank ran as client
	Error error             // a rank-level failure (report not delivered, ...)
}

// Partial reports whether this rank saw any failure.
func (o *Outcome) Partial() bool {
	if o.Error != nil {
		return true
	}
	if o.Doc != nil {
		for _, d := range o.Rails {
			if d.Outcome != result.MeshComplete {
				return true
			}
		}
		return o.Doc.Outcome != result.MeshComplete
	}
	for _, p := range o.Own {
		if p.Status != result.StatusOK {
			return true
		}
	}
	return false
}

// Run runs this rank's part: bootstrap through the launcher, servers up,
// a link to rank 0, the rounds (with barriers over the links), the report;
// rank 0 also collects every report and builds the document. An error
// means the rank could not take part at all (bootstrap, device, listen).
// Run closes cfg.Boot. Once the rounds have begun, ctx ending (SIGINT or
// SIGTERM from the launcher) stops the rounds: the pairs not run are
// failed, the reports still reach rank 0 within a few seconds, and rank 0
// returns the partial document.
func Run(ctx context.Context, cfg Config) (*Outcome, error) {
	start := time.Now()
	b := cfg.Boot
	closeBoot := sync.OnceValue(b.Close)
	defer closeBoot()
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
	var co *coordinator
	if rank == 0 {
		// The run key: it authenticates the links to rank 0 and every
		// pair's control session (authKey below).
		me.Key = make([]byte, 32)
		rand.Read(me.Key) //nolint:errcheck // crypto/rand does not fail on Linux
		cln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
		if err != nil {
			return nil, fmt.Errorf("mesh: coordinator: %w", err)
		}
		me.Collector = cln.Addr().String()
		co = newCoordinator(cln, me.Key, n)
		go co.serve()
		defer co.close()
	}
	all, err := gather(bootCtx, b, "host", me)
	if err != nil {
		return nil, err
	}
	// authKey is rank 0's run key, shared through the launcher: every
	// pair's control session proves it (benchserver.Config.AuthKey and
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
	if len(cfg.Rails) > 0 {
		me.RailDevices, me.Device = cfg.Rails, cfg.Rails[0]
	}
	rep := Report{Rank: rank, UnsyncedFrom: -1}
	var lk *link
	var linkErr error
	if rank != 0 {
		// Before the last all-gather: rank 0 counts a rank without a link
		// after it as lost.
		lctx, lcancel := context.WithTimeout(bootCtx, cfg.ConnTimeout)
		lk, linkErr = dialLink(lctx, all[0].Collector, authKey, rank)
		lcancel()
		if linkErr != nil {
			linkErr = fmt.Errorf("mesh: link to rank 0 at %s: %w", all[0].Collector, linkErr)
			if len(rounds) > 1 {
				rep.UnsyncedFrom = 1
			}
			rep.Warnings = append(rep.Warnings, linkErr.Error()+": no barriers, and the report cannot reach rank 0")
			logf("%v", linkErr)
		} else {
			defer lk.close()
		}
	}
	slots := Inbound(rounds, rank)
	nr := max(1, len(me.RailDevices)) // this host's rails
	for r := range nr {
		srvs, lns, err := startServers(ctx, cfg, ip, me.onRail(r).Device, (me.LocalRank*nr+r)*slots, slots, authKey)
		if err != nil {
			return nil, err
		}
		defer func() {
			for _, s := range srvs {
				s.stop()
			}
		}()
		ports := []int{}
		for _, ln := range lns {
			ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
		}
		if r == 0 {
			me.Ports = ports
		}
		if len(me.RailDevices) > 0 {
			me.RailPorts = append(me.RailPorts, ports)
		}
	}
	if all, err = gather(bootCtx, b, "info", me); err != nil {
		return nil, err
	}
	// The rails every host has: the fewest of any rank.
	rails := 1
	if len(me.RailDevices) > 0 {
		rails = len(me.RailDevices)
		for _, o := range all {
			rails = min(rails, len(o.RailDevices), len(o.RailPorts))
		}
		if rails < len(me.RailDevices) {
			w := fmt.Sprintf("rails: %d here (%v), but a host has only %d: rails %d.. are left out", len(me.RailDevices), me.RailDevices, rails, rails)
			rep.Warnings = append(rep.Warnings, w)
			logf("%s", w)
		}
		if rails == 0 {
			return nil, fmt.Errorf("mesh: --rails: a rank has no rail")
		}
	}
	steps := railSteps(len(rounds), rails, cfg.RailsParallel)
	// The launcher's part ends here (PMI finalize): the barriers run over
	// the links, so a rank the launcher loses cannot break them.
	closeBoot() //nolint:errcheck // best effort: the launcher's part is over either way
	cancel()
	if co != nil {
		co.expectAll()
	}
	ctx, killed := cfg.watchKill(ctx, lk)

	// slack is how far past its deadline a pair may still be returning.
	slack := min(cfg.RoundTimeout, 10*time.Second)
	pairTime := cfg.RoundTimeout + slack
	interrupted := -1 // the step a signal stopped the run at
	for si, st := range steps {
		if killed() {
			return nil, errKilled
		}
		if ctx.Err() != nil {
			interrupted = si
			break
		}
		if si > 0 && rep.UnsyncedFrom < 0 {
			var err error
			if co != nil {
				err = co.barrier(ctx, si, pairTime)
			} else {
				// rank 0 may still run its own pair, then wait for the others
				err = lk.barrier(ctx, si, 2*pairTime+5*time.Second)
			}
			if killed() {
				return nil, errKilled
			}
			if ctx.Err() != nil {
				interrupted = si
				break
			}
			if err != nil {
				rep.UnsyncedFrom = si
				w := fmt.Sprintf("barrier before round %d failed (%v): the remaining rounds run unsynchronised", si, err)
				rep.Warnings = append(rep.Warnings, w)
				logf("%s", w)
			}
		}
		pairs := make([][]result.MeshPair, len(st))
		var wg sync.WaitGroup
		for k, rr := range st {
			run := func() {
				round := rounds[rr.round]
				for i, p := range round {
					if p.Client != rank {
						continue
					}
					srv := all[p.Server].onRail(rr.rail)
					mp := result.MeshPair{Round: rr.rail*len(rounds) + rr.round, Client: rank, Server: p.Server, ClientHost: host, ServerHost: srv.Host}
					on := ""
					if len(me.RailDevices) > 0 {
						on = fmt.Sprintf(" on rail %d (%s → %s)", rr.rail, me.onRail(rr.rail).Device, srv.Device)
					}
					logf("round %d/%d: %s(%d) → %s(%d)%s", rr.round+1, len(rounds), host, rank, srv.Host, p.Server, on)
					runPair(ctx, cfg, me.onRail(rr.rail), srv, ServerSlot(round, i), authKey, &mp)
					if mp.Status != result.StatusOK {
						logf("pair %s%s failed: %s", mp.Name(), on, mp.Error)
					}
					pairs[k] = append(pairs[k], mp)
				}
			}
			if len(st) == 1 {
				run()
				continue
			}
			wg.Add(1)
			go func() { defer wg.Done(); run() }()
		}
		wg.Wait()
		if killed() {
			return nil, errKilled
		}
		for _, ps := range pairs {
			for _, mp := range ps {
				if rep.Env == nil && mp.Env != nil {
					rep.Env = mp.Env
				}
				rep.Pairs = append(rep.Pairs, mp)
			}
		}
	}
	if interrupted < 0 && ctx.Err() != nil { // in the last round
		interrupted = len(steps)
	}
	if interrupted >= 0 {
		w := fmt.Sprintf("interrupted (SIGINT or SIGTERM) in round %d of %d: the pairs not run are failed", max(interrupted, 1), len(steps))
		rep.Warnings = append(rep.Warnings, w)
		logf("%s", w)
		rep.Pairs = append(rep.Pairs, notRun(rounds, steps[min(interrupted, len(steps)):], rank, host, all)...)
	}
	out := &Outcome{Own: rep.Pairs}
	// The longest wait for rank 0 is a test of another rank still running;
	// after a signal every rank stops at once, so a few seconds do.
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), pairTime)
	defer wcancel()
	if interrupted >= 0 {
		wctx, wcancel = context.WithTimeout(wctx, interruptGrace)
		defer wcancel()
	} else {
		stop := context.AfterFunc(ctx, func() { time.AfterFunc(interruptGrace, wcancel) })
		defer stop()
	}
	if rank != 0 {
		switch {
		case lk == nil:
			out.Error = linkErr
		default:
			if err := lk.deliver(wctx, rep); err != nil {
				out.Error = fmt.Errorf("mesh: report to rank 0: %w", err)
			}
		}
		return out, nil
	}
	ws, unsynced := co.syncState()
	rep.Warnings = append(rep.Warnings, ws...)
	if unsynced >= 0 && (rep.UnsyncedFrom < 0 || unsynced < rep.UnsyncedFrom) {
		rep.UnsyncedFrom = unsynced
	}
	co.add(rep)
	reports, lost := co.wait(wctx)
	if len(me.RailDevices) == 0 {
		out.Doc = assemble(cfg, start, b.Launcher(), rounds, all, reports, lost)
		return out, nil
	}
	for r := range rails {
		railAll := make([]rankInfo, len(all))
		for i, o := range all {
			railAll[i] = o.onRail(r)
		}
		out.Rails = append(out.Rails, assemble(cfg, start, b.Launcher(), rounds, railAll, railReports(reports, r, len(rounds), cfg.RailsParallel), lost))
	}
	out.Doc = out.Rails[0]
	return out, nil
}

// railRound is one round of the schedule on one rail.
type railRound struct{ rail, round int }

// railSteps is the run's steps, a barrier before each but the first: rail
// after rail, each rail's rounds in order; or (parallel) each round on
// every rail at once. Without rails (rails 1) the steps are the rounds.
func railSteps(rounds, rails int, parallel bool) [][]railRound {
	var out [][]railRound
	if parallel {
		for ri := range rounds {
			var st []railRound
			for r := range rails {
				st = append(st, railRound{r, ri})
			}
			out = append(out, st)
		}
		return out
	}
	for r := range rails {
		for ri := range rounds {
			out = append(out, []railRound{{r, ri}})
		}
	}
	return out
}

// railReports is the reports as rail r sees them: the pairs of rail r
// (MeshPair.Round is rail × rounds + the round while the run goes on),
// their rounds counted from 0, and the step from which a rank ran
// unsynchronised as a round of this rail (0: the whole rail).
func railReports(reports map[int]Report, r, rounds int, parallel bool) map[int]Report {
	out := make(map[int]Report, len(reports))
	for k, rep := range reports {
		rr := Report{Rank: rep.Rank, Warnings: rep.Warnings, UnsyncedFrom: rep.UnsyncedFrom}
		if u := rep.UnsyncedFrom; u >= 0 && !parallel {
			switch {
			case u < r*rounds:
				rr.UnsyncedFrom = 0
			case u >= (r+1)*rounds:
				rr.UnsyncedFrom = -1
			default:
				rr.UnsyncedFrom = u - r*rounds
			}
		}
		for _, p := range rep.Pairs {
			if p.Round/rounds == r {
				p.Round %= rounds
				rr.Pairs = append(rr.Pairs, p)
				if rr.Env == nil { // the rank's environment on this rail's device
					rr.Env = p.Env
				}
			}
		}
		out[k] = rr
	}
	return out
}

// interruptGrace is how long, after a signal, a rank may take to deliver
// its report and rank 0 waits for the reports.
const interruptGrace = 5 * time.Second

// errKilled is a rank stopped by Config.kill (tests: a killed process).
var errKilled = errors.New("mesh: rank killed")

// watchKill arms the test hook Config.kill: when it closes, the rank acts
// as a killed process: its link closes, its test in progress stops, and
// Run returns errKilled (its servers close on the way out). killed reports
// whether that happened.
func (cfg Config) watchKill(ctx context.Context, lk *link) (_ context.Context, killed func() bool) {
	if cfg.kill == nil {
		return ctx, func() bool { return false }
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-cfg.kill:
		case <-ctx.Done():
			return
		}
		if lk != nil {
			lk.close()
		}
		cancel()
	}()
	return ctx, func() bool {
		select {
		case <-cfg.kill:
			return true
		default:
			return false
		}
	}
}

// notRun is rank's pairs as client in the steps not run, failed as not
// run.
func notRun(rounds []Round, steps [][]railRound, rank int, host string, all []rankInfo) []result.MeshPair {
	var out []result.MeshPair
	for _, st := range steps {
		for _, rr := range st {
			for _, p := range rounds[rr.round] {
				if p.Client == rank {
					out = append(out, result.MeshPair{Round: rr.rail*len(rounds) + rr.round, Client: rank, Server: p.Server, ClientHost: host,
						ServerHost: all[p.Server].Host, Status: result.StatusFailed, Results: []result.Result{},
						Error: "not run: the rank was interrupted (SIGINT or SIGTERM)"})
				}
			}
		}
	}
	return out
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

// server is one benchserver.Server serving one listener.
type server struct {
	srv    *benchserver.Server
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
// Slot s listens on cfg.Port + first + s (with --port). dev is their
// device ("": by route).
func startServers(ctx context.Context, cfg Config, ip netip.Addr, dev string, first, slots int, authKey []byte) ([]*server, []net.Listener, error) {
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
			port = cfg.Port + first + s
		}
		srv, err := benchserver.New(benchserver.Config{Device: dev, Port: cfg.Client.Port,
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
	// Every server listened before the bootstrap ended, so one refused
	// connection means its rank died: no retries until --connect-timeout.
	var d net.Dialer
	probe, err := d.DialContext(pctx, "tcp", addr)
	if err != nil {
		mp.Error = fmt.Sprintf("rank %d's server at %s: %v (the rank died or was killed)", srv.Rank, addr, err)
		return
	}
	probe.Close()
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
