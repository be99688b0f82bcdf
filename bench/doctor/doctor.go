// Package doctor checks a host for the pitfalls that make RDMA numbers
// meaningless before any test runs: MTU, PFC and pause frames, ECN/DCQCN,
// interrupt placement, memlock, the PCIe link, relaxed ordering and ACS,
// missing RoCE v2 GIDs, port state and the CPU frequency governor; with a
// peer's facts it compares both ends (MTU, firmware, GID types, link
// speed). It reads sysfs and /proc under an injectable root, and runs dcb,
// mlnx_qos and ethtool where they exist, so that every check is
// table-tested over a fake tree. It is pure Go: what only verbs knows (the
// port's active MTU) comes from the caller. What cannot be read is
// unknown, never pass. docs/doctor.md describes each check.
package doctor

import (
	"context"
	"errors"
	"math"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Input is what the checks read and from where. Nil functions and an
// empty Root mean the live system.
type Input struct {
	// Root is the directory that holds sys/ and proc/: "/" (or "") on a
	// live system, a fake tree in tests.
	Root string
	// Host is the host name the facts carry.
	Host string
	// Device and Port are the RDMA device and port to check ("": the
	// device checks are unknown).
	Device string
	Port   int
	// ActiveMTU is the port's active MTU from ibv_query_port, bytes; 0:
	// unknown (sysfs does not expose it).
	ActiveMTU int
	// MaxMTU is the port's largest MTU from ibv_query_port, bytes; 0:
	// unknown.
	MaxMTU int
	// Netdev is the netdev under the port; "": found in sysfs (the port's
	// GIDs' ndevs, the PCI device's net/, rxe's parent).
	Netdev string
	// Memlock returns RLIMIT_MEMLOCK's soft and hard limits, bytes, -1 for
	// unlimited.
	Memlock func() (soft, hard int64, err error)
	// Addrs returns the IP addresses on a netdev.
	Addrs func(netdev string) ([]netip.Addr, error)
	// Tool runs a command (dcb, mlnx_qos, ethtool) and returns its output;
	// an error wrapping exec.ErrNotFound when it is not installed.
	Tool func(name string, args ...string) ([]byte, error)
	// GIDs returns the port's populated GID table entries as verbs reads
	// them (ibv_query_gid_table: one call, where sysfs takes a read of
	// every slot, and a RoCE table has hundreds: in an emulated guest the
	// reads cost most of a second); nil or an error: read from sysfs.
	GIDs func() ([]GID, error)
}

// GID is one populated GID table entry.
type GID struct {
	Index  int
	Addr   netip.Addr
	Type   string // as sysfs's gid_attrs/types: "RoCE v2", "IB/RoCE v1"
	Netdev string // gid_attrs/ndevs; "" none
}

// check is one named check over a gathered host.
type check struct {
	name string
	run  func(h *host) (status, detail, fix string)
}

// checks are the single-host checks, in the order they are reported.
var checks = []check{
	{"port-state", checkPortState},
	{"mtu", checkMTU},
	{"roce-gid", checkRoCEGID},
	{"pfc", checkPFC},
	{"pause", checkPause},
	{"ecn", checkECN},
	{"irq-numa", checkIRQNUMA},
	{"pcie-link", checkPCIeLink},
	{"relaxed-ordering", checkRelaxedOrdering},
	{"acs", checkACS},
	{"memlock", checkMemlock},
	{"governor", checkGovernor},
}

// Names lists the checks Run reports, then those Compare reports.
func Names() []string {
	var out []string
	for _, c := range checks {
		out = append(out, c.name)
	}
	return append(out, peerChecks...)
}

// Run gathers the host's facts and runs every check.
func Run(in Input) (result.DoctorHost, []result.DoctorFinding) {
	h := gather(withDefaults(in))
	var out []result.DoctorFinding
	for _, c := range checks {
		st, detail, fix := c.run(h)
		if st == result.DoctorPass {
			fix = ""
		}
		out = append(out, result.DoctorFinding{Check: c.name, Status: st, Detail: detail, Fix: fix})
	}
	return h.facts, out
}

// Compact is the findings as a result's environment records them.
func Compact(fs []result.DoctorFinding) []result.DoctorCheck {
	out := make([]result.DoctorCheck, len(fs))
	for i, f := range fs {
		out[i] = result.DoctorCheck{Check: f.Check, Status: f.Status}
	}
	return out
}

// toolTimeout bounds each run of dcb, mlnx_qos or ethtool.
const toolTimeout = 2 * time.Second

func withDefaults(in Input) Input {
	if in.Root == "" {
		in.Root = "/"
	}
	if in.Port == 0 {
		in.Port = 1
	}
	if in.Memlock == nil {
		in.Memlock = liveMemlock
	}
	if in.Addrs == nil {
		in.Addrs = liveAddrs
	}
	if in.Tool == nil {
		in.Tool = liveTool
	}
	return in
}

func liveMemlock() (int64, int64, error) {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &r); err != nil {
		return 0, 0, err
	}
	conv := func(v uint64) int64 {
		if v == unix.RLIM_INFINITY || v > math.MaxInt64 {
			return -1
		}
		return int64(v)
	}
	return conv(r.Cur), conv(r.Max), nil
}

func liveAddrs(netdev string) ([]netip.Addr, error) {
	ifc, err := net.InterfaceByName(netdev)
	if err != nil {
		return nil, err
	}
	as, err := ifc.Addrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, a := range as {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr())
		}
	}
	return out, nil
}

func liveTool(name string, args ...string) ([]byte, error) {
	key := strings.Join(append([]string{name}, args...), "\x00")
	if configTools[name] {
		if e, ok := toolCache.get(key); ok {
			return e.out, e.err
		}
	}
	out, err := runTool(name, args...)
	if configTools[name] {
		toolCache.put(key, toolAnswer{out: out, err: err, at: time.Now()})
	}
	return out, err
}

func runTool(name string, args ...string) ([]byte, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	if ctx.Err() != nil {
		err = errors.New("no answer within " + toolTimeout.String())
	}
	return out, err
}

// configTools print configuration (PFC), not counters: their answers are
// reused for toolCacheTTL. A run asks twice (the client's and the server's
// findings, the same host in a loopback) and a server once per client; each
// run of dcb costs about 0.1 s under emulation. ethtool -S (counters) always
// runs.
var configTools = map[string]bool{"dcb": true, "mlnx_qos": true}

// toolCacheTTL is how old a configuration answer may be.
const toolCacheTTL = 10 * time.Second

type toolAnswer struct {
	out []byte
	err error
	at  time.Time
}

// toolCache holds the configuration tools' latest answers, by command line.
var toolCache = answerCache{m: map[string]toolAnswer{}}

type answerCache struct {
	mu sync.Mutex
	m  map[string]toolAnswer
}

func (c *answerCache) get(key string) (toolAnswer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || time.Since(e.at) > toolCacheTTL {
		return toolAnswer{}, false
	}
	return e, true
}

func (c *answerCache) put(key string, e toolAnswer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= 64 { // a bound: one entry per netdev and tool
		clear(c.m)
	}
	c.m[key] = e
}
