package fabric

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/plot"
	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/golden"
)

// The fixtures in testdata are real runs of make fabrics (TestFabrics) in the qemu
// guest (rxe1 and siw1 through rdma_cm, TCP over lo; 2 B and 64 KiB; 2000
// latency iterations, 2 s of bandwidth), each fabric's latency and
// bandwidth documents merged into one, histograms, intervals and
// connection tables dropped.
func fixtures(t *testing.T, names ...string) []*result.Document {
	t.Helper()
	if len(names) == 0 {
		names = []string{"roce", "iwarp", "tcp"}
	}
	var docs []*result.Document
	for _, n := range names {
		d, err := result.ReadJSONFile(filepath.Join("testdata", n+".json"))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

// find returns the result of op, mode and size in doc.
func find(t *testing.T, doc *result.Document, op, mode string, size int) *result.Result {
	t.Helper()
	for i := range doc.Results {
		r := &doc.Results[i]
		if r.Op == op && r.Mode == mode && r.SizeBytes == size {
			return r
		}
	}
	t.Fatalf("no %s %s %dB in %s", op, mode, size, doc.Env.Device)
	return nil
}

// row returns the row of rep named name ("send lat 2B").
func row(t *testing.T, rep *Report, name string) *Row {
	t.Helper()
	for i := range rep.Rows {
		if rep.Rows[i].Name() == name {
			return &rep.Rows[i]
		}
	}
	t.Fatalf("no row %q", name)
	return nil
}

func TestReportText(t *testing.T) {
	rep := New(fixtures(t))
	var labels []string
	for _, f := range rep.Fabrics {
		labels = append(labels, f.Label)
	}
	if want := []string{"RoCE rxe1 (rdma_rxe)", "iWARP siw1 (siw)", "TCP lo"}; !slices.Equal(labels, want) {
		t.Fatalf("labels %q, want %q", labels, want)
	}
	if rep.Base != 2 {
		t.Fatalf("baseline fabric %d, want 2 (TCP)", rep.Base)
	}
	if len(rep.Rows) != 12 {
		t.Fatalf("%d rows, want 12 (send, write, read × 2B, 64K × lat, bw)", len(rep.Rows))
	}
	// TCP and RDMA results of one op and size share a row; WRITE and READ
	// rows take TCP's SEND of the same mode and size.
	send := row(t, rep, "send lat 2B")
	for i, c := range send.Cells {
		if c.Result == nil || c.Send {
			t.Errorf("send lat 2B, %s: %+v, want its own result", rep.Fabrics[i].Label, c)
		}
	}
	if send.Cells[2].Result.Transport != result.TransportTCP || send.Baseline != send.Cells[2].Result {
		t.Error("send lat 2B: the TCP result is not the baseline")
	}
	read := row(t, rep, "read bw 64K")
	if c := read.Cells[2]; !c.Send || c.Result.Op != result.OpSend || c.Result.SizeBytes != 65536 || c.Result.Mode != result.ModeBW {
		t.Errorf("read bw 64K, TCP cell %+v, want TCP's send bw 64K standing in", c)
	}
	if read.Baseline != read.Cells[2].Result {
		t.Error("read bw 64K: baseline is not TCP's send bw 64K")
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b, result.UnitMiB, report.Width); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.golden", b.Bytes())
	out := b.String()
	for _, want := range []string{"RoCE rxe1 (rdma_rxe)", "iWARP siw1 (siw)", "TCP lo", "p99.9[usec]", "BW[MiB/sec]",
		"CPU[usec/msg]", "link[%]", "(send)", "x)", "TCP has only SEND", " R  timed interval"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if err := rep.WriteText(&b, "KB", report.Width); err == nil {
		t.Error(`unit "KB" accepted`)
	}
}

func TestReportMarkdown(t *testing.T) {
	rep := New(fixtures(t))
	var b bytes.Buffer
	if err := rep.WriteMarkdown(&b, result.UnitGb); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report_markdown.golden", b.Bytes())
	out := b.String()
	for _, want := range []string{"| test | metric | RoCE rxe1 (rdma_rxe) | iWARP siw1 (siw) | TCP lo | flags |",
		"| **read lat 2B** | p50[usec] |", "BW[Gb/sec]", "- **R**: timed interval"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// TestFlagTimedInterval: a TCP result timing RTT/2 and an RDMA result
// timing a full round trip get their row flagged, by rtt_ns or, in a
// document without it, by the timed interval.
func TestFlagTimedInterval(t *testing.T) {
	docs := fixtures(t, "roce", "tcp")
	rdma := find(t, docs[0], result.OpSend, result.ModeLat, 2)
	if flags := row(t, New(docs), "send lat 2B").Flags; len(flags) != 0 {
		t.Fatalf("send lat 2B flagged %+v with RTT/2 on both sides", flags)
	}

	// The RDMA result times the whole round trip: no rtt_ns, divisor 1.
	rdma.RTT, rdma.HistogramDivisor = nil, 1
	rdma.TimedInterval = "one full SEND/RECV ping-pong round trip (RTT), from post to the reply's receive completion"
	r := row(t, New(docs), "send lat 2B")
	if r.Marks() != MarkRTT {
		t.Fatalf("marks %q, want %q", r.Marks(), MarkRTT)
	}
	if want := "RTT: RoCE rxe1 (rdma_rxe); RTT/2: TCP lo"; r.Flags[0].Detail() != want {
		t.Errorf("detail %q, want %q", r.Flags[0].Detail(), want)
	}

	// An older TCP document without rtt_ns or divisor: its timed interval
	// says RTT/2.
	tcp := find(t, docs[1], result.OpSend, result.ModeLat, 2)
	tcp.RTT, tcp.HistogramDivisor = nil, 0
	if r := row(t, New(docs), "send lat 2B"); r.Marks() != MarkRTT {
		t.Errorf("marks %q with the TCP interval %q, want %q", r.Marks(), tcp.TimedInterval, MarkRTT)
	}

	// READ (RTT) against TCP's SEND (RTT/2), in the real fixtures.
	r = row(t, New(fixtures(t)), "read lat 64K")
	if r.Marks() != MarkRTT || !strings.Contains(r.Flags[0].Detail(), "RTT/2: TCP lo (send)") {
		t.Errorf("read lat 64K: marks %q, flags %+v", r.Marks(), r.Flags)
	}
	var b bytes.Buffer
	if err := New(fixtures(t)).WriteText(&b, result.UnitMiB, report.Width); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "read lat 2B: RTT: RoCE rxe1 (rdma_rxe), iWARP siw1 (siw); RTT/2: TCP lo (send)") {
		t.Errorf("no footnote for read lat 2B in\n%s", b.String())
	}
}

// TestFlagSettings: each setting that differs flags the row with its mark.
func TestFlagSettings(t *testing.T) {
	tests := []struct {
		name   string
		row    string
		change func(roce *result.Result)
		mark   string
		detail string
	}{
		{"inline", "write lat 2B", func(r *result.Result) { r.Inline = 0 },
			MarkInline, "not inline (inline size 0 B): RoCE rxe1 (rdma_rxe); inline (inline size 80 B): iWARP siw1 (siw)"},
		{"open loop", "send lat 2B", func(r *result.Result) {
			r.OpenLoop = &result.OpenLoop{Schedule: result.SchedulePoisson, RateTarget: 2000, RateAchieved: 1999}
		}, MarkOpenLoop, "open loop at 2000 ops/s (poisson): RoCE rxe1 (rdma_rxe); closed loop: iWARP siw1 (siw), TCP lo"},
		{"QP type", "send bw 2B", func(r *result.Result) { r.QPType = "UD" },
			MarkQPType, "UD: RoCE rxe1 (rdma_rxe); RC: iWARP siw1 (siw)"},
		{"MR mode", "write bw 64K", func(r *result.Result) { r.MRMode = result.MRModePerOp },
			MarkMRMode, "per-op: RoCE rxe1 (rdma_rxe); pool: iWARP siw1 (siw)"},
		{"QP count", "write bw 64K", func(r *result.Result) { r.QPs = 4 },
			MarkQPs, "4 QPs: RoCE rxe1 (rdma_rxe); 1 QP: iWARP siw1 (siw), TCP lo (send)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			docs := fixtures(t)
			f := strings.Fields(tc.row)
			size := map[string]int{"2B": 2, "64K": 65536}[f[2]]
			if r := row(t, New(docs), tc.row); len(r.Flags) != 0 {
				t.Fatalf("%s flagged %q before the change", tc.row, r.Marks())
			}
			tc.change(find(t, docs[0], f[0], f[1], size))
			r := row(t, New(docs), tc.row)
			if r.Marks() != tc.mark {
				t.Fatalf("marks %q, want %q", r.Marks(), tc.mark)
			}
			if got := r.Flags[0].Detail(); got != tc.detail {
				t.Errorf("detail %q, want %q", got, tc.detail)
			}
			var b bytes.Buffer
			if err := New(docs).WriteText(&b, result.UnitMiB, report.Width); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), " "+tc.mark+"  "+MarkTitle(tc.mark)+"\n      "+tc.row+": "+tc.detail+"\n") {
				t.Errorf("no footnote for %s in\n%s", tc.mark, b.String())
			}
		})
	}
	// Different inline sizes that both send the message inline, or neither
	// (64K over 236 B and 80 B), are fair.
	rep := New(fixtures(t))
	for _, name := range []string{"send lat 2B", "send lat 64K", "write lat 64K"} {
		if r := row(t, rep, name); len(r.Flags) != 0 {
			t.Errorf("%s flagged %q", name, r.Marks())
		}
	}
}

// TestSplitFiles: a fabric's latency and bandwidth files share a column.
func TestSplitFiles(t *testing.T) {
	docs := fixtures(t)
	whole := New(docs)
	roce := docs[0]
	lat, bw := *roce, *roce
	lat.Results, bw.Results = nil, nil
	for _, r := range roce.Results {
		if r.Mode == result.ModeLat {
			lat.Results = append(lat.Results, r)
		} else {
			bw.Results = append(bw.Results, r)
		}
	}
	split := New([]*result.Document{&lat, docs[1], &bw, docs[2]})
	if len(split.Fabrics) != 3 || len(split.Fabrics[0].Docs) != 2 {
		t.Fatalf("%d fabrics (first with %d files), want 3 (2)", len(split.Fabrics), len(split.Fabrics[0].Docs))
	}
	var a, b bytes.Buffer
	if err := whole.WriteText(&a, result.UnitMiB, report.Width); err != nil {
		t.Fatal(err)
	}
	if err := split.WriteText(&b, result.UnitMiB, report.Width); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("split files:\n%s\nwant as one file:\n%s", b.String(), a.String())
	}
}

func TestLabels(t *testing.T) {
	docs := fixtures(t)
	docs[1].Env.Host = "node2"
	rep := New(docs)
	// the guests' host name is the kernel's "(none)": no name to show
	want := []string{"RoCE rxe1 (rdma_rxe)", "iWARP siw1 (siw) on node2", "TCP lo"}
	for i, f := range rep.Fabrics {
		if f.Label != want[i] {
			t.Errorf("label %q, want %q", f.Label, want[i])
		}
	}
}

func TestTransportOf(t *testing.T) {
	docs := fixtures(t)
	for _, d := range docs {
		d.Env.Transport = "" // as written before the field existed
	}
	for i, want := range []string{TransportRoCE, TransportIWARP, TransportTCP} {
		if got := TransportOf(docs[i]); got != want {
			t.Errorf("%s: %q, want %q", docs[i].Env.Device, got, want)
		}
	}
	ib := &result.Document{Env: result.Env{LinkLayer: "InfiniBand", Device: "mlx5_0"}}
	if got := TransportOf(ib); got != TransportInfiniBand {
		t.Errorf("InfiniBand link: %q", got)
	}
}

func TestNoBaseline(t *testing.T) {
	rep := New(fixtures(t, "roce", "iwarp"))
	if rep.Base != -1 {
		t.Fatalf("baseline %d without a TCP document", rep.Base)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b, result.UnitMiB, report.Width); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "x)") || !strings.Contains(out, "no TCP run among the files") {
		t.Errorf("without TCP:\n%s", out)
	}
}

// svgTexts returns the character data of the <text> elements of an SVG
// file, failing t unless it is well-formed XML with an <svg> root.
func svgTexts(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	var texts, stack []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 && tok.Name.Local != "svg" {
				t.Fatalf("%s: root <%s>, want <svg>", path, tok.Name.Local)
			}
			stack = append(stack, tok.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && stack[len(stack)-1] == "text" {
				texts = append(texts, strings.TrimSpace(string(tok)))
			}
		}
	}
	return texts
}

func TestPlot(t *testing.T) {
	rep := New(fixtures(t))
	dir := t.TempDir()
	svg := filepath.Join(dir, "latency.svg")
	if err := rep.Plot(svg); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(svg); err != nil || st.Size() == 0 {
		t.Fatalf("%s: %v, size %d", svg, err, st.Size())
	}
	texts := svgTexts(t, svg)
	for _, want := range []string{"RoCE rxe1 (rdma_rxe) send p50", "RoCE rxe1 (rdma_rxe) read p99.9",
		"iWARP siw1 (siw) write p50", "iWARP siw1 (siw) write p99.9", "TCP lo send p50", "TCP lo send p99.9",
		"message size (bytes, log2 scale)", "latency (µs, log scale)", "2", "64K"} {
		if !slices.Contains(texts, want) {
			t.Errorf("no text %q in %q", want, texts)
		}
	}
	for _, s := range texts {
		if strings.HasPrefix(s, "TCP lo write") || strings.HasPrefix(s, "TCP lo read") {
			t.Errorf("TCP's SEND stand-in drawn as %q", s)
		}
	}
	title := strings.Join(texts, "\n")
	for _, want := range []string{"p50 and p99.9 latency against message size", "SEND, WRITE latency: RTT/2", "READ latency: RTT", "(software RDMA)"} {
		if !strings.Contains(title, want) {
			t.Errorf("title lacks %q in %q", want, texts)
		}
	}

	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	var legend []string
	for _, s := range texts {
		if strings.HasSuffix(s, " p50") || strings.HasSuffix(s, " p99.9") {
			legend = append(legend, s)
		}
	}
	if over, err := plot.Overflows(b, legend); err != nil || len(over) > 0 {
		t.Errorf("text past the picture's edge (%v): %q", err, over)
	}

	// every p99.9 n/a: the title names p50, the series drawn, and says
	// that p99.9 is not drawn; PlotGaps names each fabric and op
	noTail := fixtures(t)
	for _, d := range noTail {
		for i := range d.Results {
			d.Results[i].Latency.P99_9 = result.Nanos{}
		}
	}
	tailless := filepath.Join(dir, "p50.svg")
	if err := New(noTail).Plot(tailless); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(svgTexts(t, tailless), "\n")
	if !strings.Contains(all, "p50 latency against message size") || !strings.Contains(all, "p99.9 not drawn: n/a in every test") {
		t.Errorf("every p99.9 n/a: the plot lacks p50 or does not say p99.9 is not drawn: %q", all)
	}
	gaps := New(noTail).PlotGaps()
	if len(gaps) == 0 || !strings.Contains(gaps[0], "p99.9 of RoCE rxe1 (rdma_rxe) send: n/a at 2B") {
		t.Errorf("PlotGaps = %q", gaps)
	}
	if g := rep.PlotGaps(); len(g) != 0 {
		t.Errorf("PlotGaps of a report whose lines are all drawn: %q", g)
	}

	png := filepath.Join(dir, "latency.png")
	if err := rep.Plot(png); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("%s is not a PNG (%v)", png, err)
	}
	if err := rep.Plot(filepath.Join(dir, "latency.pdf")); err == nil {
		t.Error("a .pdf plot was accepted")
	}
	bwOnly := fixtures(t, "tcp")
	bwOnly[0].Results = slices.DeleteFunc(bwOnly[0].Results, func(r result.Result) bool { return r.Mode == result.ModeLat })
	if err := New(bwOnly).Plot(filepath.Join(dir, "none.svg")); !errors.Is(err, plot.ErrNothingToPlot) {
		t.Errorf("plot without latency results: %v, want ErrNothingToPlot", err)
	}
}
