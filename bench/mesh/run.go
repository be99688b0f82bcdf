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
	m, err := newRankRun(cfg)
	defer m.closeBoot() //nolint:errcheck // Run closes cfg.Boot, once, whatever ends it
	if err != nil {
		return nil, err
	}
	bootCtx, cancel := context.WithTimeout(ctx, cfg.RoundTimeout)
	defer cancel()
	if m.rank == 0 {
		if err := m.startCoordinator(); err != nil {
			return nil, err
		}
		defer m.co.close()
	}
	if err := m.gatherHosts(bootCtx); err != nil {
		return nil, err
	}
	if m.rank != 0 {
		if m.dialRank0(bootCtx) {
			defer m.lk.close()
		}
	}
	stopServers, err := m.startRailServers(ctx)
	if err != nil {
		return nil, err
	}
	defer stopServers()
	if err := m.gatherInfo(bootCtx); err != nil {
		return nil, err
	}
	m.endBootstrap(cancel)
	ctx, killed := cfg.watchKill(ctx, m.lk)
	interrupted, err := m.runSteps(ctx, killed)
	if err != nil {
		return nil, err
	}
	m.failNotRun(interrupted)
	return m.end(ctx, interrupted)
}

// rankRun is one rank's run as Run's steps build it up, in order.
type rankRun struct {
	cfg       Config
	start     time.Time
	closeBoot func() error // cfg.Boot's Close, once
	rank, n   int          // this rank, of n
	rounds    []Round
	ip        netip.Addr // the control address
	host      string
	me        rankInfo
	co        *coordinator // rank 0's; nil on the others
	all       []rankInfo   // every rank's, by rank: gatherHosts, then gatherInfo
	// authKey is rank 0's run key, shared through the launcher: every
	// pair's control session proves it (benchserver.Config.AuthKey and
	// bench.ClientConfig.AuthKey; see startServers and runPair).
	authKey []byte
	rep     Report
	lk      *link // the link to rank 0 (rank != 0); nil where it failed
	linkErr error // why lk is nil
	rails   int   // the rails every host has
	steps   [][]railRound
	// pairTime bounds a pair: the round timeout and slack, how far past its
	// deadline a pair may still be returning.
	pairTime time.Duration
}

// newRankRun is the run's schedule, control address and host name; m,
// even with an error, has closeBoot.
func newRankRun(cfg Config) (*rankRun, error) {
	b := cfg.Boot
	m := &rankRun{cfg: cfg, start: time.Now(), closeBoot: sync.OnceValue(b.Close), rank: b.Rank(), n: b.Size()}
	var err error
	if m.rounds, err = Schedule(cfg.Pattern, m.n, cfg.Root); err != nil {
		return m, err
	}
	if m.ip, err = ControlAddr(cfg.Net); err != nil {
		return m, err
	}
	m.host, _ = os.Hostname()
	m.me = rankInfo{Rank: m.rank, Host: m.host, Addr: m.ip.String()}
	m.rep = Report{Rank: m.rank, UnsyncedFrom: -1}
	slack := min(cfg.RoundTimeout, 10*time.Second)
	m.pairTime = cfg.RoundTimeout + slack
	return m, nil
}

func (m *rankRun) logf(format string, a ...any) {
	if m.cfg.Log != nil {
		fmt.Fprintf(m.cfg.Log, "mesh rank %d: "+format+"\n", append([]any{m.rank}, a...)...)
	}
}

// warn adds w to the report's warnings, and logs it.
func (m *rankRun) warn(w string) {
	m.rep.Warnings = append(m.rep.Warnings, w)
	m.logf("%s", w)
}

// startCoordinator is rank 0's: the run key, which authenticates the
// links to rank 0 and every pair's control session (authKey), and the
// coordinator the links reach. The caller closes m.co.
func (m *rankRun) startCoordinator() error {
	m.me.Key = make([]byte, 32)
	rand.Read(m.me.Key) //nolint:errcheck // crypto/rand does not fail on Linux
	cln, err := net.Listen("tcp", net.JoinHostPort(m.ip.String(), "0"))
	if err != nil {
		return fmt.Errorf("mesh: coordinator: %w", err)
	}
	m.me.Collector = cln.Addr().String()
	m.co = newCoordinator(cln, m.me.Key, m.n)
	go m.co.serve()
	return nil
}

// gatherHosts is the first all-gather (the hosts, rank 0's key and
// coordinator), then this rank's local rank and devices.
func (m *rankRun) gatherHosts(ctx context.Context) error {
	all, err := gather(ctx, m.cfg.Boot, "host", m.me)
	if err != nil {
		return err
	}
	m.all, m.authKey = all, all[0].Key
	me := &m.me
	me.Key, me.Collector = nil, ""
	for _, o := range all[:m.rank] {
		if o.Host == m.host {
			me.LocalRank++
		}
	}
	if len(m.cfg.DeviceMap) > 0 {
		me.Device = m.cfg.DeviceMap[me.LocalRank%len(m.cfg.DeviceMap)]
	}
	if len(m.cfg.Rails) > 0 {
		me.RailDevices, me.Device = m.cfg.Rails, m.cfg.Rails[0]
	}
	return nil
}

// dialRank0 links a rank but 0 to rank 0's coordinator, before the last
// all-gather (rank 0 counts a rank without a link after it as lost). A
// link that fails is a warning: no barriers, and no report to rank 0.
// ok: m.lk is up, for the caller to close.
func (m *rankRun) dialRank0(ctx context.Context) (ok bool) {
	lctx, lcancel := context.WithTimeout(ctx, m.cfg.ConnTimeout)
	m.lk, m.linkErr = dialLink(lctx, m.all[0].Collector, m.authKey, m.rank)
	lcancel()
	if m.linkErr == nil {
		return true
	}
	m.linkErr = fmt.Errorf("mesh: link to rank 0 at %s: %w", m.all[0].Collector, m.linkErr)
	if len(m.rounds) > 1 {
		m.rep.UnsyncedFrom = 1
	}
	m.rep.Warnings = append(m.rep.Warnings, m.linkErr.Error()+": no barriers, and the report cannot reach rank 0")
	m.logf("%v", m.linkErr)
	return false
}

// startRailServers starts this rank's servers on each of its rails, their
// ports in m.me; stop stops them, the last rail's first. On an error,
// those started are stopped.
func (m *rankRun) startRailServers(ctx context.Context) (stop func(), err error) {
	var started [][]*server
	stop = func() {
		for r := len(started) - 1; r >= 0; r-- {
			for _, s := range started[r] {
				s.stop()
			}
		}
	}
	me := &m.me
	slots := Inbound(m.rounds, m.rank)
	nr := max(1, len(me.RailDevices)) // this host's rails
	for r := range nr {
		srvs, lns, err := startServers(ctx, m.cfg, m.ip, me.onRail(r).Device, (me.LocalRank*nr+r)*slots, slots, m.authKey)
		if err != nil {
			stop()
			return nil, err
		}
		started = append(started, srvs)
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
	return stop, nil
}

// gatherInfo is the last all-gather (every rank's ports and devices),
// then the rails every host has, the fewest of any rank, and the steps.
func (m *rankRun) gatherInfo(ctx context.Context) error {
	var err error
	if m.all, err = gather(ctx, m.cfg.Boot, "info", m.me); err != nil {
		return err
	}
	me := m.me
	m.rails = 1
	if len(me.RailDevices) > 0 {
		m.rails = len(me.RailDevices)
		for _, o := range m.all {
			m.rails = min(m.rails, len(o.RailDevices), len(o.RailPorts))
		}
		if m.rails < len(me.RailDevices) {
			m.warn(fmt.Sprintf("rails: %d here (%v), but a host has only %d: rails %d.. are left out", len(me.RailDevices), me.RailDevices, m.rails, m.rails))
		}
		if m.rails == 0 {
			return fmt.Errorf("mesh: --rails: a rank has no rail")
		}
	}
	m.steps = railSteps(len(m.rounds), m.rails, m.cfg.RailsParallel)
	return nil
}

// endBootstrap ends the launcher's part (PMI finalize) and the bootstrap's
// deadline (cancel): the barriers run over the links, so a rank the
// launcher loses cannot break them. Rank 0's coordinator now expects
// every rank's link.
func (m *rankRun) endBootstrap(cancel context.CancelFunc) {
	m.closeBoot() //nolint:errcheck // best effort: the launcher's part is over either way
	cancel()
	if m.co != nil {
		m.co.expectAll()
	}
}

// runSteps runs the steps in order, a barrier before each but the first
// (until one fails: the rest run unsynchronised), this rank's pairs into
// m.rep. interrupted is the step a signal (ctx) stopped the run at,
// len(m.steps) in the last one; -1: none. err is errKilled.
func (m *rankRun) runSteps(ctx context.Context, killed func() bool) (interrupted int, err error) {
	for si, st := range m.steps {
		if killed() {
			return -1, errKilled
		}
		if ctx.Err() != nil {
			return si, nil
		}
		if si > 0 && m.rep.UnsyncedFrom < 0 {
			err := m.barrier(ctx, si)
			if killed() {
				return -1, errKilled
			}
			if ctx.Err() != nil {
				return si, nil
			}
			if err != nil {
				m.rep.UnsyncedFrom = si
				m.warn(fmt.Sprintf("barrier before round %d failed (%v): the remaining rounds run unsynchronised", si, err))
			}
		}
		pairs := m.runStep(ctx, st)
		if killed() {
			return -1, errKilled
		}
		for _, ps := range pairs {
			for _, mp := range ps {
				if m.rep.Env == nil && mp.Env != nil {
					m.rep.Env = mp.Env
				}
				m.rep.Pairs = append(m.rep.Pairs, mp)
			}
		}
	}
	if ctx.Err() != nil { // in the last round
		return len(m.steps), nil
	}
	return -1, nil
}

// barrier is the barrier before step si: rank 0's coordinator's, or the
// link's.
func (m *rankRun) barrier(ctx context.Context, si int) error {
	if m.co != nil {
		return m.co.barrier(ctx, si, m.pairTime)
	}
	// rank 0 may still run its own pair, then wait for the others
	return m.lk.barrier(ctx, si, 2*m.pairTime+5*time.Second)
}

// runStep runs this rank's pairs (as client) of one step: each rail's
// round, at once where the step has more than one; pairs[k] are st[k]'s.
func (m *rankRun) runStep(ctx context.Context, st []railRound) (pairs [][]result.MeshPair) {
	pairs = make([][]result.MeshPair, len(st))
	var wg sync.WaitGroup
	for k, rr := range st {
		run := func() { pairs[k] = m.runRound(ctx, rr) }
		if len(st) == 1 {
			run()
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); run() }()
	}
	wg.Wait()
	return pairs
}

// runRound runs this rank's pairs (as client) of round rr.round on rail
// rr.rail, in order.
func (m *rankRun) runRound(ctx context.Context, rr railRound) []result.MeshPair {
	var pairs []result.MeshPair
	me, rank, host := m.me, m.rank, m.host
	round := m.rounds[rr.round]
	for i, p := range round {
		if p.Client != rank {
			continue
		}
		srv := m.all[p.Server].onRail(rr.rail)
		mp := result.MeshPair{Round: rr.rail*len(m.rounds) + rr.round, Client: rank, Server: p.Server, ClientHost: host, ServerHost: srv.Host}
		on := ""
		if len(me.RailDevices) > 0 {
			on = fmt.Sprintf(" on rail %d (%s → %s)", rr.rail, me.onRail(rr.rail).Device, srv.Device)
		}
		m.logf("round %d/%d: %s(%d) → %s(%d)%s", rr.round+1, len(m.rounds), host, rank, srv.Host, p.Server, on)
		runPair(ctx, m.cfg, me.onRail(rr.rail), srv, ServerSlot(round, i), m.authKey, &mp)
		if mp.Status != result.StatusOK {
			m.logf("pair %s%s failed: %s", mp.Name(), on, mp.Error)
		}
		pairs = append(pairs, mp)
	}
	return pairs
}

// failNotRun, after a signal stopped the run at step interrupted (-1:
// none), warns of it and fails the pairs not run.
func (m *rankRun) failNotRun(interrupted int) {
	if interrupted < 0 {
		return
	}
	m.warn(fmt.Sprintf("interrupted (SIGINT or SIGTERM) in round %d of %d: the pairs not run are failed", max(interrupted, 1), len(m.steps)))
	m.rep.Pairs = append(m.rep.Pairs, notRun(m.rounds, m.steps[min(interrupted, len(m.steps)):], m.rank, m.host, m.all)...)
}

// end is the run's end: a rank but 0 delivers its report to rank 0;
// rank 0 waits for every report and builds the documents (one per rail
// with rails).
func (m *rankRun) end(ctx context.Context, interrupted int) (*Outcome, error) {
	out := &Outcome{Own: m.rep.Pairs}
	// The longest wait for rank 0 is a test of another rank still running;
	// after a signal every rank stops at once, so a few seconds do.
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), m.pairTime)
	defer wcancel()
	if interrupted >= 0 {
		wctx, wcancel = context.WithTimeout(wctx, interruptGrace)
		defer wcancel()
	} else {
		stop := context.AfterFunc(ctx, func() { time.AfterFunc(interruptGrace, wcancel) })
		defer stop()
	}
	if m.rank != 0 {
		switch {
		case m.lk == nil:
			out.Error = m.linkErr
		default:
			if err := m.lk.deliver(wctx, m.rep); err != nil {
				out.Error = fmt.Errorf("mesh: report to rank 0: %w", err)
			}
		}
		return out, nil
	}
	co, rep := m.co, m.rep
	ws, unsynced := co.syncState()
	rep.Warnings = append(rep.Warnings, ws...)
	if unsynced >= 0 && (rep.UnsyncedFrom < 0 || unsynced < rep.UnsyncedFrom) {
		rep.UnsyncedFrom = unsynced
	}
	co.add(rep)
	reports, lost := co.wait(wctx)
	launcher := m.cfg.Boot.Launcher()
	if len(m.me.RailDevices) == 0 {
		out.Doc = assemble(m.cfg, m.start, launcher, m.rounds, m.all, reports, lost)
		return out, nil
	}
	for r := range m.rails {
		railAll := make([]rankInfo, len(m.all))
		for i, o := range m.all {
			railAll[i] = o.onRail(r)
		}
		out.Rails = append(out.Rails, assemble(m.cfg, m.start, launcher, m.rounds, railAll, railReports(reports, r, len(m.rounds), m.cfg.RailsParallel), lost))
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
