package perftest

import (
	"errors"
	"strings"
	"testing"
)

func TestToolOf(t *testing.T) {
	for _, tc := range []struct {
		argv0 string
		want  Tool
		ok    bool
	}{
		{"ib_send_lat", Tool{"ib_send_lat", Send, true}, true},
		{"/usr/lib/rdmabench/perftest/ib_write_bw", Tool{"ib_write_bw", Write, false}, true},
		{"./ib_atomic_lat", Tool{"ib_atomic_lat", Atomic, true}, true},
		{"ib_read_bw", Tool{"ib_read_bw", Read, false}, true},
		{"rdmabench", Tool{}, false},
		{"ib_send_lat2", Tool{}, false},
		{"raw_ethernet_bw", Tool{}, false},
	} {
		got, ok := ToolOf(tc.argv0)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ToolOf(%q) = %+v, %v; want %+v, %v", tc.argv0, got, ok, tc.want, tc.ok)
		}
	}
	if len(Tools) != 8 {
		t.Errorf("%d tools, want 8", len(Tools))
	}
}

// TestParse: perftest's getopt_long rules, the mapping of each kind of
// option, and the refusals, each naming the option.
func TestParse(t *testing.T) {
	type check func(Options) bool
	for _, tc := range []struct {
		tool string
		args string
		ok   check
		err  string // substring of the error ("" = none)
		ns   bool   // the error is ErrNotSupported
	}{
		{"ib_send_lat", "", func(o Options) bool {
			return o.IsServer() && o.Port == 18515 && o.IBPort == 1 && o.GIDIndex == -1 && o.SizeOrDefault() == 2 &&
				o.ItersOrDefault() == 1000 && o.TxDepthOrDefault() == 1 && o.Inline == -1 && o.ConnOrDefault() == "RC"
		}, "", false},
		{"ib_send_lat", "-d rxe0 -x 1 -p 19001 127.0.0.1", func(o Options) bool {
			return o.Host == "127.0.0.1" && o.Device == "rxe0" && o.GIDIndex == 1 && o.Port == 19001
		}, "", false},
		{"ib_write_bw", "192.0.2.1 -s65536 -n 0x10 --tx-depth=64 -Q 8", func(o Options) bool {
			return o.Host == "192.0.2.1" && o.Size == 65536 && o.Iters == 16 && o.TxDepth == 64 && o.CQModOrDefault() == 8
		}, "", false},
		{"ib_write_bw", "", func(o Options) bool {
			return o.SizeOrDefault() == 65536 && o.ItersOrDefault() == 5000 && o.TxDepthOrDefault() == 128 && o.CQModOrDefault() == 1
		}, "", false},
		{"ib_send_bw", "-n 50 -s 4096", func(o Options) bool { return o.TxDepthOrDefault() == 50 && o.CQModOrDefault() == 50 }, "", false},
		{"ib_send_bw", "-aFb --report_gbits -q 4 -c UD", func(o Options) bool {
			return o.AllSizes && o.Bidir && o.ReportGbits && o.QPs == 4 && o.Conn == "UD" && len(o.Sizes(4096)) == 12 && o.CQModOrDefault() == 100
		}, "", false},
		{"ib_write_lat", "-a", func(o Options) bool { s := o.Sizes(0); return len(s) == 23 && s[0] == 2 && s[22] == MaxSize }, "", false},
		{"ib_atomic_bw", "-A CMP_AND_SWAP -o 4", func(o Options) bool {
			return o.Op() == "cmp_swap" && o.SizeOrDefault() == 8 && o.OutReads == 4
		}, "", false},
		{"ib_atomic_lat", "", func(o Options) bool { return o.Op() == "fetch_add" }, "", false},
		{"ib_write_lat", "--write_with_imm", func(o Options) bool { return o.Op() == "write_imm" }, "", false},
		{"ib_write_bw", "--write_with_imm -c UC", func(o Options) bool { return o.Op() == "write_imm" && o.Conn == "UC" }, "", false},
		{"ib_send_lat", "--send_with_imm", func(o Options) bool { return o.Op() == "send_imm" }, "", false},
		{"ib_send_bw", "--send_with_imm", func(o Options) bool { return o.Op() == "send_imm" }, "", false},
		{"ib_write_bw", "", func(o Options) bool { return o.Op() == "write" }, "", false},
		{"ib_read_bw", "-D 10 --output=bandwidth -R -u 20 --retry_count 5", func(o Options) bool {
			return o.Duration == 10 && o.Output == "bandwidth" && o.RDMACM && o.QPTimeout == 20 && o.RetryCount == 5
		}, "", false},
		{"ib_send_lat", "-I 64 -e -H -m 1024 -S 3 --tclass 96 --use-srq --odp --use_hugepages --data_validation -F --dont_xchg_versions", func(o Options) bool {
			return o.Inline == 64 && o.Events && o.Histogram && o.MTU == 1024 && o.SL == 3 && o.TClass == 96 && o.SRQ && o.ODP && o.HugePages && o.Verify
		}, "", false},
		{"ib_write_bw", "-l 8 -N -w 100 -y 0.5 --cq-mod 4 -- host", func(o Options) bool {
			return o.PostList == 8 && o.NoPeak && o.LimitBW == 100 && o.LimitMsgRate == 0.5 && o.Host == "host"
		}, "", false},
		{"ib_write_bw", "--report_g", func(o Options) bool { return o.ReportGbits }, "", false}, // a unique prefix
		{"ib_send_lat", "-V", func(o Options) bool { return o.Version }, "", false},
		{"ib_send_lat", "--help", func(o Options) bool { return o.Help }, "", false},

		{"ib_send_lat", "-U", nil, "-U: not supported", true},
		{"ib_send_lat", "-C", nil, "-C: not supported", true},
		{"ib_write_bw", "--run_infinitely", nil, "--run_infinitely: not supported", true},
		{"ib_write_bw", "-c XRC", nil, "-c: not supported", true},
		{"ib_write_bw", "--out_json", nil, "--out_json: not supported", true},
		{"ib_write_bw", "--use_cuda=0", nil, "--use_cuda: not supported", true},
		{"ib_write_bw", "-O", nil, "-O: not supported", true},
		{"ib_send_lat", "-b", nil, "-b: ib_send_lat has no such option", false},
		{"ib_send_lat", "-q 2", nil, "-q: ib_send_lat has no such option", false},
		{"ib_atomic_bw", "-s 64", nil, "-s: ib_atomic_bw has no such option", false},
		{"ib_write_lat", "-e", nil, "-e: ib_write_lat has no such option", false},
		{"ib_send_lat", "--write_with_imm", nil, "--write_with_imm: ib_send_lat has no such option", false},
		{"ib_read_bw", "--send_with_imm", nil, "--send_with_imm: ib_read_bw has no such option", false},
		{"ib_write_bw", "--unsolicited_write", nil, "--unsolicited_write: not supported", true},
		{"ib_send_lat", "-Z", nil, "-Z: unknown option", false},
		{"ib_send_lat", "--bogus", nil, "--bogus: unknown option", false},
		{"ib_write_bw", "--rep", nil, "ambiguous", false},
		{"ib_send_lat", "-s", nil, "-s: needs a value", false},
		{"ib_send_lat", "-n 3", nil, "-n: 3 out of range 5..100000000", false},
		{"ib_send_lat", "-s 9000000", nil, "-s: 9000000 out of range", false},
		{"ib_send_lat", "-m 1000", nil, "-m: 1000: want 256", false},
		{"ib_send_lat", "-c XY", nil, "-c: \"XY\": want RC, UC or UD", false},
		{"ib_write_lat", "-c UD", nil, "UD carries SEND only", false},
		{"ib_read_bw", "-c UC", nil, "UC has no READ", false},
		{"ib_send_bw", "-c UC -R", nil, `-R: perftest refuses it too ("UC is not supported in librdmacm"`, false},
		{"ib_write_lat", "-c UC -R", nil, "UC without -R", false},
		{"ib_send_lat", "-c UD -R", nil, "-R: rdmabench connects RC QPs only through rdma_cm; perftest 6.06 runs UD with -R", false},
		{"ib_send_bw", "-c UD -R", nil, "UD without -R, or RC with -R", false},
		{"ib_send_lat", "-a -s 64", nil, "-a runs every size", false},
		{"ib_send_lat", "-D 2 -n 100", nil, "either -D", false},
		{"ib_send_lat", "a b", nil, "more than one host", false},
		{"ib_send_lat", "--size=x", nil, "--size: \"x\" is not a number", false},
		{"ib_send_lat", "-F=1", nil, "", false}, // -F then -= : unknown option
		{"ib_send_lat", "--CPU-freq=1", nil, "--CPU-freq: takes no value", false},
		{"ib_write_bw", "-w 0", nil, "-w: \"0\": want a positive number", false},
		{"ib_send_lat", "--output=latency -H", nil, "-H: --output prints one number", false},
		{"ib_write_bw", "--output=speed", nil, "--output: \"speed\"", false},
	} {
		tool := Tools[tc.tool]
		o, err := Parse(tool, strings.Fields(tc.args))
		name := tc.tool + " " + tc.args
		if tc.ok != nil {
			if err != nil || !tc.ok(o) {
				t.Errorf("%s: %v, %+v", name, err, o)
			}
			continue
		}
		if tc.args == "-F=1" {
			if err == nil || !strings.Contains(err.Error(), "-=: unknown option") {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		var ue *UsageError
		if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ue) || errors.Is(err, ErrNotSupported) != tc.ns {
			t.Errorf("%s: error %v, want one containing %q (not supported: %v)", name, err, tc.err, tc.ns)
		}
	}
}

// TestFlagsComplete: every option either maps or says why not; names are
// unique; perftest 6.06's options (its --help) are all known.
func TestFlagsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Flags() {
		if seen[f.Long] || (f.Short != "" && seen[f.Short]) {
			t.Errorf("%s %s listed twice", f.Short, f.Long)
		}
		seen[f.Long], seen[f.Short] = true, true
		if f.Supported == (f.Why != "") {
			t.Errorf("%s: supported %v with reason %q", f.Long, f.Supported, f.Why)
		}
	}
	for _, name := range strings.Fields(perftest606Options) {
		if !seen[name] {
			t.Errorf("perftest 6.06 option %s unknown to the drop-in", name)
		}
	}
}

// perftest606Options are the options of Debian's perftest 6.06 --help,
// all eight tools together.
const perftest606Options = `--aes_block_size --burst_size --cpu_util --disable_pcie_relaxed --dlid --dont_xchg_versions
--force-link --inline_recv --ipv6 --latency_gap --log_active_dci_streams --log_dci_streams --mmap --mmap-offset --mr_per_qp
--odp --out_json --out_json_file --output --perform_warm_up --pkey_index --rate_limit --rate_limit_type --rate_units
--recv_post_list --report-both --report-per-port --report_gbits --retry_count --reversed --run_infinitely --source_ip
--tclass --typical_pkt_size --use-srq --use_hugepages --use_old_post_send --wait_destroy --aes_xts --encrypt_on_tx
--sig_before --data_enc_keys_number --kek_path --credentials_path --data_enc_key_app_path
-A --atomic_type -C --report-cycles -D --duration -F --CPU-freq -H --report-histogram -I --inline_size -L --hop_limit
-M --MGID -N --noPeak -O --dualport -Q --cq-mod -R --rdma_cm -S --sl -T --tos -U --report-unsorted -V --version
-W --report-counters -X --vector -a --all -b --bidirectional -c --connection -d --ib-dev -e --events -f --margin -g --mcg
-h --help -i --ib-port -l --post_list -m --mtu -n --iters -o --outs -p --port -q --qp -r --rx-depth -s --size
-t --tx-depth -u --qp-timeout -w --limit_bw -x --gid-index -y --limit_msgrate -z --comm_rdma_cm`
