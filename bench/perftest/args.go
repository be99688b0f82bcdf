package perftest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// DefaultPort is perftest's TCP port (-p).
const DefaultPort = 18515

// Options are a perftest command line, read by Parse. Zero values mean
// perftest's default for the tool (the Default* methods resolve them).
type Options struct {
	Tool   Tool
	Host   string // the server to connect to; "" runs the server
	Port   int    // -p, TCP port
	Device string // -d
	IBPort int    // -i, device port (1)
	// GIDIndex is -x; -1 lets rdmabench choose.
	GIDIndex int
	Size     int   // -s, bytes; 0: the default
	AllSizes bool  // -a: 2 B to 8 MiB in powers of two
	Iters    int64 // -n, per QP; 0: the default
	Duration int   // -D, seconds; 0: iterations mode
	TxDepth  int   // -t
	RxDepth  int   // -r
	CQMod    int   // -Q
	// Conn is the connection type, -c: "RC", "UC" or "UD".
	Conn        string
	QPs         int  // -q
	Bidir       bool // -b
	ReportGbits bool // --report_gbits
	RDMACM      bool // -R
	// Inline is -I, bytes; -1: perftest's rule (none on rxe and siw).
	Inline     int
	Events     bool   // -e
	PostList   int    // -l
	MTU        int    // -m, bytes
	QPTimeout  int    // -u
	RetryCount int    // --retry_count
	AtomicType string // -A: "FETCH_AND_ADD" (default) or "CMP_AND_SWAP"
	OutReads   int    // -o
	SL         int    // -S
	TClass     int    // --tclass
	Histogram  bool   // -H: print every sample, sorted
	NoPeak     bool   // -N
	// Output is --output: "", "bandwidth", "message_rate" or "latency"
	// (perftest then prints that one number only).
	Output       string
	LimitBW      float64 // -w, in the report's unit (MB/sec or Gb/sec)
	LimitMsgRate float64 // -y, Mpps
	SRQ          bool    // --use-srq
	ODP          bool    // --odp
	HugePages    bool    // --use_hugepages
	Verify       bool    // --data_validation
	// NoRelaxed is --disable_pcie_relaxed, PKeyIndex --pkey_index and
	// Vector -X/--vector (the CQs' completion vector, perftest's eq_num).
	NoRelaxed bool
	PKeyIndex int
	Vector    int
	Version   bool // -V
	Help      bool // -h
	// Given holds the long name of every option on the command line.
	Given map[string]bool
}

// UsageError is a command line perftest (or the drop-in) refuses; Flag
// names the option, when one is at fault.
type UsageError struct {
	Flag string
	Err  error
}

func (e *UsageError) Error() string {
	if e.Flag == "" {
		return e.Err.Error()
	}
	return e.Flag + ": " + e.Err.Error()
}

func (e *UsageError) Unwrap() error { return e.Err }

// ErrNotSupported marks a perftest option the drop-in cannot honour.
var ErrNotSupported = errors.New("not supported by rdmabench's perftest drop-in")

// Parse reads tool's arguments (without argv[0]) as getopt_long does for
// perftest: bundled short options (-aF), values attached or separate (-s64,
// -s 64, --size=64, --size 64), unique prefixes of long options, and the
// host anywhere among them.
func Parse(tool Tool, args []string) (Options, error) {
	o := Options{Tool: tool, Port: DefaultPort, IBPort: 1, GIDIndex: -1, Inline: -1, Given: map[string]bool{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func(name string) (string, error) {
			if i+1 >= len(args) {
				return "", &UsageError{Flag: name, Err: errors.New("needs a value")}
			}
			i++
			return args[i], nil
		}
		switch {
		case a == "--":
			for _, h := range args[i+1:] {
				if err := o.setHost(h); err != nil {
					return o, err
				}
			}
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			d, err := lookupLong(name)
			if err != nil {
				return o, err
			}
			if d.arg && !hasVal {
				if val, err = next("--" + d.long); err != nil {
					return o, err
				}
			} else if !d.arg && hasVal {
				return o, &UsageError{Flag: "--" + d.long, Err: errors.New("takes no value")}
			}
			if err := o.apply(d, "--"+d.long, val); err != nil {
				return o, err
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				d, ok := shortFlags[a[j]]
				if !ok {
					return o, &UsageError{Flag: "-" + string(a[j]), Err: fmt.Errorf("unknown option (%s --help lists the ones the drop-in takes)", tool.Name)}
				}
				name := "-" + string(a[j])
				val := ""
				if d.arg {
					if j+1 < len(a) {
						val = a[j+1:]
					} else {
						var err error
						if val, err = next(name); err != nil {
							return o, err
						}
					}
					j = len(a)
				}
				if err := o.apply(d, name, val); err != nil {
					return o, err
				}
			}
		default:
			if err := o.setHost(a); err != nil {
				return o, err
			}
		}
	}
	return o, o.check()
}

func (o *Options) setHost(h string) error {
	if o.Host != "" {
		return &UsageError{Err: fmt.Errorf("more than one host given (%q and %q)", o.Host, h)}
	}
	o.Host = h
	return nil
}

// lookupLong finds a long option by its name or a unique prefix of it.
func lookupLong(name string) (*flagDef, error) {
	if d, ok := longFlags[name]; ok {
		return d, nil
	}
	var found *flagDef
	for long, d := range longFlags {
		if strings.HasPrefix(long, name) && name != "" {
			if found != nil && found != d {
				return nil, &UsageError{Flag: "--" + name, Err: errors.New("ambiguous option")}
			}
			found = d
		}
	}
	if found == nil {
		return nil, &UsageError{Flag: "--" + name, Err: errors.New("unknown option")}
	}
	return found, nil
}

// apply runs d's setter after checking the tool has the option.
func (o *Options) apply(d *flagDef, name, val string) error {
	if d.only != "" && !d.availableIn(o.Tool) {
		return &UsageError{Flag: name, Err: fmt.Errorf("%s has no such option (perftest: %s)", o.Tool.Name, d.only)}
	}
	if d.set == nil {
		return &UsageError{Flag: name, Err: fmt.Errorf("%w: %s", ErrNotSupported, d.why)}
	}
	o.Given[d.long] = true
	if err := d.set(o, val); err != nil {
		return &UsageError{Flag: name, Err: err}
	}
	return nil
}

// intIn parses v as perftest does (strtol, base 0: 10, 0x10, 010) and
// checks it lies in lo..hi.
func intIn(v string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", v)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d out of range %d..%d", n, lo, hi)
	}
	return n, nil
}

// check applies the rules that span options.
func (o *Options) check() error {
	if o.Version || o.Help {
		return nil
	}
	switch {
	case o.Bidir && o.Tool.Lat:
		return &UsageError{Flag: "-b", Err: errors.New("bidirectional tests are bandwidth tests")}
	case o.Conn == "UD" && o.Tool.Verb != Send:
		return &UsageError{Flag: "-c", Err: fmt.Errorf("UD carries SEND only, not %s (perftest refuses it too)", o.Tool.Name)}
	case o.Conn == "UC" && o.Tool.readsOrAtomics():
		return &UsageError{Flag: "-c", Err: fmt.Errorf("UC has no READ or atomics (%s needs RC)", o.Tool.Name)}
	case o.RDMACM && o.Conn != "" && o.Conn != "RC":
		return &UsageError{Flag: "-R", Err: errors.New(RDMACMQPType(o.Conn))}
	case o.AllSizes && o.Given["size"]:
		return &UsageError{Flag: "-a", Err: errors.New("-a runs every size: drop -s")}
	case o.Output != "" && o.Histogram:
		return &UsageError{Flag: "-H", Err: errors.New("--output prints one number: drop -H")}
	}
	if o.Duration > 0 && o.Given["iters"] {
		return &UsageError{Flag: "-D", Err: errors.New("give either -D (seconds) or -n (iterations), not both")}
	}
	return nil
}

// IsServer reports whether the command line runs perftest's server (no host).
func (o Options) IsServer() bool { return o.Host == "" }

// SizeOrDefault is the message size: -s, else 8 B for atomics, 2 B for
// latency and 65536 B for bandwidth (perftest's defaults).
func (o Options) SizeOrDefault() int {
	switch {
	case o.Tool.Verb == Atomic:
		return 8
	case o.Size > 0:
		return o.Size
	case o.Tool.Lat:
		return 2
	}
	return 65536
}

// Sizes are the message sizes of the run: every power of two from 2 B to
// 8 MiB with -a (UD: up to mtu, the path MTU in bytes, when known), else
// the one size.
func (o Options) Sizes(mtu int) []int {
	if !o.AllSizes || o.Tool.Verb == Atomic {
		return []int{o.SizeOrDefault()}
	}
	var out []int
	for s := 2; s <= MaxSize; s *= 2 {
		if o.Conn == "UD" && mtu > 0 && s > mtu {
			break
		}
		out = append(out, s)
	}
	return out
}

// MaxSize is perftest's largest message, 8 MiB.
const MaxSize = 8 << 20

// ItersOrDefault is -n, else perftest's default: 5000 for ib_write_bw,
// 1000 for the others. Per QP, as perftest counts.
func (o Options) ItersOrDefault() int64 {
	switch {
	case o.Iters > 0:
		return o.Iters
	case o.Tool.Verb == Write && !o.Tool.Lat:
		return 5000
	}
	return 1000
}

// TxDepthOrDefault is -t, else 1 for latency and 128 for bandwidth,
// capped at the iterations as perftest caps it.
func (o Options) TxDepthOrDefault() int {
	switch {
	case o.TxDepth > 0:
		return o.TxDepth
	case o.Tool.Lat:
		return 1
	}
	if n := o.ItersOrDefault(); o.Duration == 0 && n < 128 {
		return int(n)
	}
	return 128
}

// CQModOrDefault is -Q, else perftest's: 100, but 1 for a single size
// above 8 KiB; never above the tx depth.
func (o Options) CQModOrDefault() int {
	if o.CQMod > 0 {
		return o.CQMod
	}
	m := 100
	if !o.AllSizes && o.SizeOrDefault() > 8192 {
		m = 1
	}
	return min(m, o.TxDepthOrDefault())
}

// RxDepthOrDefault is -r, else 512 capped at the iterations, as perftest
// caps it; 0 (rdmabench's default) for tools that post no receives.
func (o Options) RxDepthOrDefault() int {
	switch {
	case o.RxDepth > 0:
		return o.RxDepth
	case o.Tool.Verb != Send:
		return 0
	}
	if n := o.ItersOrDefault(); o.Duration == 0 && n < 512 {
		return int(n)
	}
	return 512
}

// QPsOrDefault is -q, else 1.
func (o Options) QPsOrDefault() int { return max(o.QPs, 1) }

// ConnOrDefault is -c, else "RC".
func (o Options) ConnOrDefault() string {
	if o.Conn == "" {
		return "RC"
	}
	return o.Conn
}

// AtomicOp is the rdmabench operation of an atomic tool: "cmp_swap" with
// -A CMP_AND_SWAP, else "fetch_add".
func (o Options) AtomicOp() string {
	if o.AtomicType == "CMP_AND_SWAP" {
		return "cmp_swap"
	}
	return "fetch_add"
}

// Op is the rdmabench operation the tool runs: write_imm with
// --write_with_imm, send_imm with --send_with_imm.
func (o Options) Op() string {
	switch {
	case o.Tool.Verb == Atomic:
		return o.AtomicOp()
	case o.Given["write_with_imm"]:
		return result.OpWriteImm
	case o.Given["send_with_imm"]:
		return result.OpSendImm
	}
	return string(o.Tool.Verb)
}
