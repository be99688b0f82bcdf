package doctor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The Ethernet fabric's lossless and congestion settings of the netdev:
// PFC (dcb or mlnx_qos), pause frame counters (ethtool -S) and ECN/DCQCN
// (mlx5's sysfs).

// netdevUnknown is the answer of a netdev check without a netdev.
func (h *host) netdevUnknown() (string, string, string) {
	return unknown, "the netdev under the RDMA port is not known", "name the device whose netdev carries the traffic: -d"
}

// toolErr says why a tool gave no answer, in a few words.
func toolErr(name string, out []byte, err error) string {
	if errors.Is(err, exec.ErrNotFound) {
		return name + " not installed"
	}
	msg := strings.TrimSpace(string(out))
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if msg == "" {
		msg = err.Error()
	}
	return name + ": " + msg
}

// checkPFC: a RoCE fabric without PFC on some priority is lossy, and each
// drop costs a retransmission timeout in the latency tail.
func checkPFC(h *host) (string, string, string) {
	if h.netDir == "" {
		return h.netdevUnknown()
	}
	nd := h.facts.Netdev
	var why []string
	out, err := h.in.Tool("dcb", "pfc", "show", "dev", nd)
	prios, ok := parseDCBPFC(string(out))
	if err != nil || !ok {
		why = append(why, toolErr("dcb", out, orUnparsed(err)))
		out, err = h.in.Tool("mlnx_qos", "-i", nd)
		if prios, ok = parseMlnxQoSPFC(string(out)); err != nil || !ok {
			why = append(why, toolErr("mlnx_qos", out, orUnparsed(err)))
			return unknown, fmt.Sprintf("PFC state of %s not readable (%s)", nd, strings.Join(why, "; ")),
				"install iproute2's dcb (or mlnx_qos) where the NIC supports DCB; software RDMA has none"
		}
	}
	if len(prios) == 0 {
		return warn, fmt.Sprintf("PFC is off on every priority of %s: RoCE runs lossy, and each drop costs a retransmission timeout in the tail", nd),
			fmt.Sprintf("dcb pfc set dev %s prio-pfc 3:on (the RoCE priority, the same on the switch), or configure the NIC for lossy RoCE deliberately", nd)
	}
	return pass, fmt.Sprintf("PFC on priority %s of %s", joinInts(prios), nd), ""
}

var errUnparsed = errors.New("output not understood")

func orUnparsed(err error) error {
	if err == nil {
		return errUnparsed
	}
	return err
}

// parseDCBPFC reads the enabled priorities from `dcb pfc show dev X`
// ("prio-pfc 0:off 1:off 2:off 3:on ..."); ok is false without that line.
func parseDCBPFC(out string) (prios []int, ok bool) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		for i, w := range f {
			if w != "prio-pfc" {
				continue
			}
			ok = true
			for _, kv := range f[i+1:] {
				p, v, found := strings.Cut(kv, ":")
				n, err := strconv.Atoi(p)
				if !found || err != nil {
					break
				}
				if v == "on" {
					prios = append(prios, n)
				}
			}
		}
	}
	return prios, ok
}

// parseMlnxQoSPFC reads the enabled priorities from mlnx_qos -i X's "PFC
// configuration" block, whose "enabled" line has a 0 or 1 per priority.
func parseMlnxQoSPFC(out string) (prios []int, ok bool) {
	inPFC := false
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "PFC configuration") {
			inPFC = true
			continue
		}
		if f := strings.Fields(t); inPFC && len(f) > 1 && f[0] == "enabled" {
			for i, v := range f[1:] {
				if v == "1" {
					prios = append(prios, i)
				}
			}
			return prios, true
		}
	}
	return nil, false
}

// checkPause: pause frames counted by the NIC (ethtool -S); a pause storm
// (a receiver that pauses its link for long) stalls everything behind it.
func checkPause(h *host) (string, string, string) {
	if h.netDir == "" {
		return h.netdevUnknown()
	}
	nd := h.facts.Netdev
	out, err := h.in.Tool("ethtool", "-S", nd)
	if err != nil {
		return unknown, fmt.Sprintf("pause counters of %s not readable (%s)", nd, toolErr("ethtool", out, err)),
			"install ethtool; a NIC without pause counters in ethtool -S cannot be checked"
	}
	pause, storm := map[string]int64{}, map[string]int64{}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if !ok || err != nil || !strings.Contains(k, "pause") {
			continue
		}
		if strings.Contains(k, "storm") {
			storm[k] = n
		} else {
			pause[k] = n
		}
	}
	if len(pause)+len(storm) == 0 {
		return unknown, "ethtool -S " + nd + " has no pause counters", "a NIC whose driver exposes no pause counters cannot be checked"
	}
	if s := nonZero(storm); s != "" {
		return fail, fmt.Sprintf("%s: pause storm events: %s", nd, s),
			"find the port that stops draining (a hung host or a NIC stuck on a priority); mlx5 drops a storm after its pause storm timeout"
	}
	if s := nonZero(pause); s != "" {
		return warn, fmt.Sprintf("%s: pause frames since the counters were reset: %s", nd, s),
			"the fabric pauses this port; a storm shows as these rising by thousands a second: ethtool -S " + nd + " | grep pause, twice"
	}
	return pass, fmt.Sprintf("%s: no pause frames (%d counters)", nd, len(pause)), ""
}

// nonZero formats the counters above zero, sorted by name ("" if none).
func nonZero(m map[string]int64) string {
	var out []string
	for k, v := range m {
		if v > 0 {
			out = append(out, fmt.Sprintf("%s %d", k, v))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// checkECN: DCQCN needs ECN marking answered on both roles: the
// notification point (receiver, roce_np) and the reaction point (sender,
// roce_rp), per priority, as mlx5 exposes them. net.ipv4.tcp_ecn is TCP's
// and says nothing about RoCE.
func checkECN(h *host) (string, string, string) {
	if h.netDir == "" {
		return h.netdevUnknown()
	}
	nd := h.facts.Netdev
	np, okNP := ecnPrios(filepath.Join(h.netDir, "ecn", "roce_np", "enable"))
	rp, okRP := ecnPrios(filepath.Join(h.netDir, "ecn", "roce_rp", "enable"))
	if !okNP || !okRP {
		return unknown, fmt.Sprintf("%s has no ecn/roce_np and ecn/roce_rp in sysfs (mlx5 exposes DCQCN there; other drivers elsewhere, software RDMA nowhere)", nd),
			"check the NIC vendor's congestion control tool"
	}
	detail := fmt.Sprintf("%s DCQCN: notification point on priority %s, reaction point on %s", nd, orNone(np), orNone(rp))
	fix := fmt.Sprintf("echo 1 > /sys/class/net/%s/ecn/roce_np/enable/3 and roce_rp/enable/3 (the RoCE priority) on both ends; mark ECN on the switch", nd)
	if len(np) == 0 || len(rp) == 0 {
		return warn, detail + ": congestion is then left to PFC pauses or loss", fix
	}
	return pass, detail, ""
}

// ecnPrios reads the enabled priorities of an ecn/*/enable directory
// (files 0-7 holding 0 or 1).
func ecnPrios(dir string) ([]int, bool) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	var out []int
	read1 := false
	for _, e := range es {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		v, ok := read(filepath.Join(dir, e.Name()))
		if !ok {
			continue
		}
		read1 = true
		if v == "1" {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, read1
}

func orNone(p []int) string {
	if len(p) == 0 {
		return "none"
	}
	return joinInts(p)
}

func joinInts(p []int) string {
	s := make([]string, len(p))
	for i, n := range p {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
