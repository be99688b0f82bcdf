package perftest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// flagDef is one perftest option: its names, whether it takes a value, the
// tools that have it, and what the drop-in does with it (set), or why it
// refuses it (why, when set is nil).
type flagDef struct {
	short byte // 0: long only
	long  string
	arg   bool
	// only, when set, says which tools have the option, in words; in
	// decides it.
	only string
	in   func(Tool) bool
	set  func(o *Options, v string) error
	why  string
}

func (d *flagDef) availableIn(t Tool) bool { return d.in == nil || d.in(t) }

// Which tools have an option (perftest's usage() per test).
var (
	bwOnly     = func(t Tool) bool { return !t.Lat }
	latOnly    = func(t Tool) bool { return t.Lat }
	readAtomic = func(t Tool) bool { return t.readsOrAtomics() }
	atomicOnly = func(t Tool) bool { return t.Verb == Atomic }
	notAtomic  = func(t Tool) bool { return t.Verb != Atomic }
	sendOnly   = func(t Tool) bool { return t.Verb == Send }
	writeOnly  = func(t Tool) bool { return t.Verb == Write }
)

// setInt returns a setter storing an integer in lo..hi through field.
func setInt(lo, hi int64, field func(*Options) *int) func(*Options, string) error {
	return func(o *Options, v string) error {
		n, err := intIn(v, lo, hi)
		*field(o) = int(n)
		return err
	}
}

func setTrue(field func(*Options) *bool) func(*Options, string) error {
	return func(o *Options, _ string) error { *field(o) = true; return nil }
}

func accept(*Options, string) error { return nil }

func setPositive(field func(*Options) *float64) func(*Options, string) error {
	return func(o *Options, v string) error {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%q: want a positive number", v)
		}
		*field(o) = f
		return nil
	}
}

// flags is every option of perftest 6.x's usage() for the eight tools (and
// the newer ones users may carry over), in --help order.
var flags = []*flagDef{
	{short: 'a', long: "all", in: notAtomic, only: "not in atomic tests", set: setTrue(func(o *Options) *bool { return &o.AllSizes })},
	{short: 'A', long: "atomic_type", arg: true, in: atomicOnly, only: "atomic tests only", set: func(o *Options, v string) error {
		switch upper(v) {
		case "FETCH_AND_ADD", "CMP_AND_SWAP":
			o.AtomicType = upper(v)
			return nil
		}
		return fmt.Errorf("%q: want FETCH_AND_ADD or CMP_AND_SWAP", v)
	}},
	{short: 'b', long: "bidirectional", in: bwOnly, only: "bandwidth tests only", set: setTrue(func(o *Options) *bool { return &o.Bidir })},
	{short: 'c', long: "connection", arg: true, set: func(o *Options, v string) error {
		switch upper(v) {
		case "RC", "UC", "UD":
			o.Conn = upper(v)
			return nil
		case "XRC", "DC", "SRD":
			return fmt.Errorf("%w: %s (rdmabench's QP types are RC, UC and UD)", ErrNotSupported, upper(v))
		}
		return fmt.Errorf("%q: want RC, UC or UD", v)
	}},
	{short: 'C', long: "report-cycles", in: latOnly, only: "latency tests only",
		why: "rdmabench times with CLOCK_MONOTONIC_RAW in nanoseconds, not CPU cycles; the table is in usec"},
	{short: 'd', long: "ib-dev", arg: true, set: func(o *Options, v string) error { o.Device = v; return nil }},
	{short: 'D', long: "duration", arg: true, set: setInt(1, 24*3600, func(o *Options) *int { return &o.Duration })},
	{short: 'e', long: "events", in: func(t Tool) bool { return t.Verb != Write }, only: "not in write tests",
		set: setTrue(func(o *Options) *bool { return &o.Events })},
	{short: 'f', long: "margin", arg: true,
		why: "rdmabench measures the whole -D span after its own warm-up instead of cutting margins off it"},
	{short: 'F', long: "CPU-freq", set: accept}, // no effect: rdmabench does not use the CPU frequency
	{short: 'g', long: "mcg", in: sendOnly, only: "send tests only", why: "multicast groups are not implemented"},
	{short: 'h', long: "help", set: setTrue(func(o *Options) *bool { return &o.Help })},
	{short: 'H', long: "report-histogram", in: latOnly, only: "latency tests only", set: setTrue(func(o *Options) *bool { return &o.Histogram })},
	{short: 'i', long: "ib-port", arg: true, set: setInt(1, 255, func(o *Options) *int { return &o.IBPort })},
	{short: 'I', long: "inline_size", arg: true, in: func(t Tool) bool { return !t.readsOrAtomics() }, only: "send and write tests only",
		set: setInt(0, 912, func(o *Options) *int { return &o.Inline })},
	{short: 'l', long: "post_list", arg: true, in: bwOnly, only: "bandwidth tests only", set: setInt(1, 4096, func(o *Options) *int { return &o.PostList })},
	{short: 'L', long: "hop_limit", arg: true, why: "rdmabench does not set the GRH hop limit"},
	{short: 'm', long: "mtu", arg: true, set: func(o *Options, v string) error {
		n, err := intIn(v, 256, 4096)
		if err == nil && n&(n-1) != 0 {
			err = fmt.Errorf("%d: want 256, 512, 1024, 2048 or 4096", n)
		}
		o.MTU = int(n)
		return err
	}},
	{short: 'M', long: "MGID", arg: true, in: sendOnly, only: "send tests only", why: "multicast groups are not implemented"},
	{short: 'n', long: "iters", arg: true, set: func(o *Options, v string) error {
		n, err := intIn(v, 5, 100_000_000)
		o.Iters = n
		return err
	}},
	{short: 'N', long: "noPeak", in: bwOnly, only: "bandwidth tests only", set: setTrue(func(o *Options) *bool { return &o.NoPeak })},
	{short: 'o', long: "outs", arg: true, in: readAtomic, only: "read and atomic tests only", set: setInt(1, 65535, func(o *Options) *int { return &o.OutReads })},
	{short: 'O', long: "dualport", in: bwOnly, only: "bandwidth tests only", why: "dual-port tests are not implemented (run -d per port)"},
	{short: 'p', long: "port", arg: true, set: setInt(1, 65535, func(o *Options) *int { return &o.Port })},
	{short: 'q', long: "qp", arg: true, in: bwOnly, only: "bandwidth tests only", set: setInt(1, 1024, func(o *Options) *int { return &o.QPs })},
	{short: 'Q', long: "cq-mod", arg: true, in: bwOnly, only: "bandwidth tests only", set: setInt(1, 1024, func(o *Options) *int { return &o.CQMod })},
	{short: 'r', long: "rx-depth", arg: true, in: sendOnly, only: "send tests only", set: setInt(1, 16384, func(o *Options) *int { return &o.RxDepth })},
	{short: 'R', long: "rdma_cm", set: setTrue(func(o *Options) *bool { return &o.RDMACM })},
	{short: 's', long: "size", arg: true, in: notAtomic, only: "not in atomic tests (8 B)", set: setInt(1, MaxSize, func(o *Options) *int { return &o.Size })},
	{short: 'S', long: "sl", arg: true, set: setInt(0, 15, func(o *Options) *int { return &o.SL })},
	{short: 't', long: "tx-depth", arg: true, in: bwOnly, only: "bandwidth tests only", set: setInt(1, 15000, func(o *Options) *int { return &o.TxDepth })},
	{short: 'T', long: "tos", arg: true, why: "rdma_cm ToS is not set; --tclass sets the GRH traffic class (RoCE v2: the same DSCP/ECN byte)"},
	{short: 'u', long: "qp-timeout", arg: true, set: setInt(1, 31, func(o *Options) *int { return &o.QPTimeout })},
	{short: 'U', long: "report-unsorted", in: latOnly, only: "latency tests only",
		why: "rdmabench keeps every sample in a histogram, not in posting order; -H prints them sorted"},
	{short: 'V', long: "version", set: setTrue(func(o *Options) *bool { return &o.Version })},
	{short: 'w', long: "limit_bw", arg: true, in: bwOnly, only: "bandwidth tests only", set: setPositive(func(o *Options) *float64 { return &o.LimitBW })},
	{short: 'W', long: "report-counters", arg: true, why: "rdmabench records the port counters that moved in its JSON (rdmabench run --json), not in perftest's table"},
	{short: 'x', long: "gid-index", arg: true, set: setInt(0, 255, func(o *Options) *int { return &o.GIDIndex })},
	{short: 'X', long: "vector", arg: true, set: setInt(0, 65535, func(o *Options) *int { return &o.Vector })},
	{short: 'y', long: "limit_msgrate", arg: true, in: bwOnly, only: "bandwidth tests only", set: setPositive(func(o *Options) *float64 { return &o.LimitMsgRate })},
	{short: 'z', long: "comm_rdma_cm", why: "rdmabench's control connection is TCP; -R creates the QPs with rdma_cm"},

	{long: "out_json", why: "perftest's JSON layout is not written; rdmabench run --json writes rdmabench's result document"},
	{long: "out_json_file", arg: true, why: "perftest's JSON layout is not written; rdmabench run --json writes rdmabench's result document"},
	{long: "cpu_util", why: "rdmabench reports CPU time per message in its JSON (cpu), not perftest's CPU_Util column"},
	{long: "dlid", arg: true, why: "the destination comes from the peer (or rdma_cm), not from a LID given by hand"},
	{long: "dont_xchg_versions", set: accept}, // no effect: rdmabench negotiates its own protocol version
	{long: "force-link", arg: true, why: "the link layer is the port's"},
	{long: "inline_recv", arg: true, why: "inline receive (scatter to CQE) is not requested"},
	{long: "use-srq", in: sendOnly, only: "send tests only", set: setTrue(func(o *Options) *bool { return &o.SRQ })},
	{long: "ipv6", why: "the GID follows the control connection's address family: give the server's IPv6 address"},
	{long: "ipv6-addr", arg: true, why: "the GID follows the control connection's address family: give the server's IPv6 address"},
	{long: "source_ip", arg: true, why: "the source follows the route to the server"},
	{long: "bind_source_ip", arg: true, why: "the source follows the route to the server"},
	{long: "mmap", arg: true, why: "buffers are anonymous mappings (or --hugepages), not a file"},
	{long: "mmap-offset", arg: true, why: "buffers are anonymous mappings (or --hugepages), not a file"},
	{long: "mr_per_qp", why: "each test registers one pool; rdmabench run --mr-mode per-op registers per operation"},
	{long: "odp", set: setTrue(func(o *Options) *bool { return &o.ODP })},
	{long: "output", arg: true, set: func(o *Options, v string) error {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "bandwidth", "message_rate", "latency":
			o.Output = strings.ToLower(strings.TrimSpace(v))
			return nil
		}
		return fmt.Errorf("%q: want bandwidth, message_rate or latency", v)
	}},
	{long: "use_old_post_send", set: accept}, // rdmabench always uses ibv_post_send
	{long: "perform_warm_up", set: accept},   // rdmabench always warms up
	{long: "pkey_index", arg: true, set: setInt(0, 65535, func(o *Options) *int { return &o.PKeyIndex })},
	{long: "report-both", in: bwOnly, only: "bandwidth tests only", why: "each side's figures: rdmabench run -b --report-both prints them in rdmabench's table"},
	{long: "report_gbits", in: bwOnly, only: "bandwidth tests only", set: setTrue(func(o *Options) *bool { return &o.ReportGbits })},
	{long: "report-per-port", in: bwOnly, only: "bandwidth tests only", why: "dual-port tests are not implemented"},
	{long: "reversed", in: bwOnly, only: "bandwidth tests only", why: "the client always posts; swap the hosts instead"},
	{long: "run_infinitely", in: bwOnly, only: "bandwidth tests only",
		why: "a run always ends; use -D SECONDS (rdmabench run --interval 1s prints a line per second)"},
	{long: "retry_count", arg: true, set: setInt(1, 7, func(o *Options) *int { return &o.RetryCount })},
	{long: "tclass", arg: true, set: setInt(0, 255, func(o *Options) *int { return &o.TClass })},
	{long: "use_hugepages", set: setTrue(func(o *Options) *bool { return &o.HugePages })},
	{long: "wait_destroy", arg: true, why: "resources are released when the test ends"},
	{long: "disable_pcie_relaxed", set: setTrue(func(o *Options) *bool { return &o.NoRelaxed })},
	{long: "latency_gap", arg: true, in: latOnly, only: "latency tests only",
		why: "the closed loop posts back to back; rdmabench run --rate N paces an open loop instead"},
	{long: "burst_size", arg: true, why: "the rate limiter is not implemented; rdmabench run --limit-bw shapes the sender"},
	{long: "typical_pkt_size", arg: true, why: "the rate limiter is not implemented; rdmabench run --limit-bw shapes the sender"},
	{long: "rate_limit", arg: true, why: "the rate limiter is not implemented; rdmabench run --limit-bw shapes the sender"},
	{long: "rate_units", arg: true, why: "the rate limiter is not implemented; rdmabench run --limit-bw shapes the sender"},
	{long: "rate_limit_type", arg: true, why: "the rate limiter is not implemented; rdmabench run --limit-bw shapes the sender"},
	{long: "recv_post_list", arg: true, why: "receives are posted one at a time"},
	{long: "data_validation", set: setTrue(func(o *Options) *bool { return &o.Verify })},
	{long: "data_validation_debug", why: "--data_validation names the first message that differs; perftest's debug dump is not written"},
	{long: "log_dci_streams", arg: true, why: "DC is not implemented"},
	{long: "log_active_dci_streams", arg: true, why: "DC is not implemented"},
	{long: "send_with_imm", in: sendOnly, only: "send tests only", set: accept}, // Op: send_imm
	{long: "connectionless", in: sendOnly, only: "send tests only", why: "multicast groups are not implemented (perftest's connectionless server serves UD multicast)"},
	{long: "write_with_imm", in: writeOnly, only: "write tests only", set: accept}, // Op: write_imm
	{long: "unsolicited_write", why: "an SRD provider knob for WRITE with immediate (SRD is not implemented)"},
	{long: "flow_label", arg: true, why: "the GRH flow label is not set"},
	{long: "use-null-mr", why: "the data path always registers real memory"},
	{long: "payload_file_path", arg: true, why: "payloads are rdmabench's own (--data_validation checks them)"},
	{long: "cqe_poll", arg: true, why: "completions are polled in batches of rdmabench's choosing"},
	{long: "disable_dynamic_polling", why: "completions are polled in batches of rdmabench's choosing"},
	{long: "no_lock", why: "an mlx5 provider knob"},
	{long: "use_ooo", why: "an mlx5 provider knob"},
	{long: "no_enhanced_reorder", why: "an mlx5 provider knob"},
	{long: "pin_cores", arg: true, why: "rdmabench run --cpu pins the threads"},
	{long: "numa_node", arg: true, why: "rdmabench run --numa-node places threads and buffers"},
	{long: "disable_numa", why: "rdmabench run --no-numa-bind turns NUMA placement off"},
	{long: "report-min-bw", arg: true, why: "not implemented"},
	{long: "sig_offload", why: "signature offload is not implemented"},
	{long: "tph_mem", arg: true, why: "TPH memory hints are not implemented"},
	{long: "ph", arg: true, why: "TPH processing hints are not implemented"},
	{long: "cpu_id", arg: true, why: "TPH processing hints are not implemented (rdmabench run --cpu pins the threads)"},
	{long: "report-histogrm", in: latOnly, only: "latency tests only", set: setTrue(func(o *Options) *bool { return &o.Histogram })}, // perftest's misspelt alias of -H
	{long: "congest_type", arg: true, why: "an hns provider knob"},
}

// accelerator and encryption options: one reason each.
func init() {
	for _, n := range []string{"use_cuda", "use_cuda_bus_id", "cuda_mem_type", "use_cuda_dmabuf", "use_cuda_pcie_mapping",
		"use_data_direct", "gpu_touch", "use_rocm", "use_rocm_dmabuf", "use_neuron", "use_neuron_dmabuf", "use_hl",
		"use_mlu", "use_mlu_dmabuf", "use_opencl", "opencl_platform_id", "use_musa", "use_musa_dmabuf", "use_musa_bus_id",
		"use_musa_pcie_mapping", "use_ib_dm_dmabuf"} {
		flags = append(flags, &flagDef{long: n, arg: n != "use_cuda_dmabuf" && n != "use_rocm_dmabuf" && n != "use_neuron_dmabuf" &&
			n != "use_mlu_dmabuf" && n != "use_musa_dmabuf" && n != "use_data_direct" && n != "use_cuda_pcie_mapping" && n != "use_musa_pcie_mapping",
			why: "buffers are host memory: accelerator memory is not implemented"})
	}
	for _, n := range []string{"aes_xts", "encrypt_on_tx", "sig_before"} {
		flags = append(flags, &flagDef{long: n, why: "AES-XTS encryption offload is not implemented"})
	}
	for _, n := range []string{"aes_block_size", "data_enc_keys_number", "kek_path", "credentials_path", "data_enc_key_app_path"} {
		flags = append(flags, &flagDef{long: n, arg: true, why: "AES-XTS encryption offload is not implemented"})
	}
	for _, d := range flags {
		if d.short != 0 {
			shortFlags[d.short] = d
		}
		longFlags[d.long] = d
	}
}

var (
	shortFlags = map[byte]*flagDef{}
	longFlags  = map[string]*flagDef{}
)

// FlagDoc is one perftest option as the drop-in treats it, for usage text
// and docs.
type FlagDoc struct {
	Short     string // "-s" or ""
	Long      string // "--size"
	Supported bool
	Only      string // which tools have it, when not all
	Why       string // why it is refused
}

// Flags lists every option the drop-in knows, in --help order.
func Flags() []FlagDoc {
	out := make([]FlagDoc, 0, len(flags))
	for _, d := range flags {
		f := FlagDoc{Long: "--" + d.long, Supported: d.set != nil, Only: d.only, Why: d.why}
		if d.short != 0 {
			f.Short = "-" + string(d.short)
		}
		out = append(out, f)
	}
	return out
}
