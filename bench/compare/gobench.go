package compare

import (
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// gobenchArch is the goarch: line of WriteGobench; rdmabench records no
// architecture, so it is that of this binary (tests fix it).
var gobenchArch = runtime.GOARCH

// WriteGobench writes the results of docs in the Go benchmark format
// (golang.org/x/perf/benchfmt) so that benchstat can compare runs: a
// goos/goarch/pkg header, then for each document a "device:" configuration
// line and one line per result, such as
//
//	BenchmarkRDMA/op=send/mode=lat/size=2 2000 14700 ns/op 12220 p50-ns 97540 p99-ns ... 297000 max-ns
//
// Name parts are op, mode, size in bytes and, when not RDMA, transport. The
// iterations are the result's; ns/op is the mean latency (lat tests only),
// then every backed percentile and the maximum in ns (n/a ones are left out:
// sample latency in lat tests, completion latency in bw tests), and MB/s
// (10^6 bytes/s) and msgs/s for bw tests. Documents follow one another in the
// given order, so that benchstat takes repeated runs as samples.
func WriteGobench(w io.Writer, docs []*result.Document) error {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: " + gobenchArch + "\npkg: rdmabench\n")
	b.WriteString("Unit MB/s better=higher\nUnit msgs/s better=higher\n")
	num := func(f float64) string {
		// 9 significant digits (ns values stay exact), never an exponent.
		r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 9, 64), 64)
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	for _, d := range docs {
		dev := d.Env.Device
		if dev == "" {
			dev = "unknown"
		}
		b.WriteString("device: " + gobenchValue(dev) + "\n")
		for i := range d.Results {
			r := &d.Results[i]
			k := result.KeyOf(r)
			name := "BenchmarkRDMA/op=" + gobenchName(k.Op) + "/mode=" + gobenchName(k.Mode) + "/size=" + strconv.Itoa(k.SizeBytes)
			if k.Transport != "" {
				name += "/transport=" + gobenchName(k.Transport)
			}
			iters := r.Iterations
			if iters < 1 {
				iters = 1
			}
			b.WriteString(name + " " + strconv.FormatInt(iters, 10))
			l := &r.Latency
			if k.Mode != result.ModeBW && l.Count > 0 {
				b.WriteString(" " + num(l.Mean) + " ns/op")
			}
			for _, p := range []struct {
				n    result.Nanos
				unit string
			}{{l.P50, "p50-ns"}, {l.P90, "p90-ns"}, {l.P99, "p99-ns"}, {l.P99_9, "p99.9-ns"}, {l.P99_99, "p99.99-ns"}} {
				if p.n.OK {
					b.WriteString(" " + num(p.n.NS) + " " + p.unit)
				}
			}
			if l.Count > 0 {
				b.WriteString(" " + num(l.Max) + " max-ns")
			}
			if k.Mode == result.ModeBW {
				b.WriteString(" " + num(r.Bandwidth.MBPerSec) + " MB/s " + num(r.Bandwidth.Mpps*1e6) + " msgs/s")
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// gobenchName makes s safe in a benchmark name part: no spaces, slashes or
// '=' (a name part is key=value).
func gobenchName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '/' || r == '=' {
			return '_'
		}
		return r
	}, s)
}

// gobenchValue keeps a configuration value on one line.
func gobenchValue(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}
