package hist

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// hgrmTicksPerHalfDistance is the number of percentile lines per halving of
// the distance to 100 %, as in HdrHistogram's own .hgrm output.
const hgrmTicksPerHalfDistance = 5

// WriteHGRM writes h to w as the classic HdrHistogram .hgrm percentile
// distribution table (Value, Percentile, TotalCount, 1/(1-Percentile), then a
// "#[Mean ...]" footer), as read by the HdrHistogram plotFiles plotter.
// Values are printed in ns divided by unitRatio: 1 prints ns, 1000 prints µs.
// The table and footer use bucket values, not the exact min and max.
func (h *Histogram) WriteHGRM(w io.Writer, unitRatio float64) error {
	if !(unitRatio > 0) || math.IsInf(unitRatio, 0) {
		return fmt.Errorf("hist: write hgrm: unit ratio %v is not a positive number", unitRatio)
	}
	bw := bufio.NewWriter(w)
	if _, err := h.h.PercentilesPrint(bw, hgrmTicksPerHalfDistance, unitRatio); err != nil {
		return fmt.Errorf("hist: write hgrm: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("hist: write hgrm: %w", err)
	}
	return nil
}

// A LogWriter writes a HdrHistogram .hlog interval log (format version 1.3),
// one compressed histogram per interval, readable by HistogramLogProcessor,
// HistogramLogAnalyzer and hdrhistogram-go's HistogramLogReader.
//
// Interval timestamps are written in seconds relative to the log's start
// time, which the header records as both StartTime and BaseTime with
// millisecond precision. The Interval_Max column is the bucketed maximum in
// ms, as in the Java tools. A LogWriter is not safe for concurrent use.
type LogWriter struct {
	lw    *hdrhistogram.HistogramLogWriter
	start time.Time
}

// NewLogWriter writes the .hlog header to w (format version, start time, base
// time, column legend) and returns a LogWriter whose intervals are timed
// relative to start. Times are kept to the millisecond.
func NewLogWriter(w io.Writer, start time.Time) (*LogWriter, error) {
	lw := hdrhistogram.NewHistogramLogWriter(w)
	ms := start.UnixMilli()
	// The library's OutputStartTime and OutputBaseTime print whole seconds;
	// write the Java format ("%.3f") so the header keeps the milliseconds.
	secs := float64(ms) / 1000
	err := errors.Join(
		lw.OutputLogFormatVersion(),
		lw.OutputComment(fmt.Sprintf("[StartTime: %.3f (seconds since epoch), %s]",
			secs, time.UnixMilli(ms).UTC().Format(time.RFC3339Nano))),
		lw.OutputComment(fmt.Sprintf("[BaseTime: %.3f (seconds since epoch)]", secs)),
		lw.OutputLegend(),
	)
	if err != nil {
		return nil, fmt.Errorf("hist: write hlog header: %w", err)
	}
	lw.SetBaseTime(ms)
	return &LogWriter{lw: lw, start: time.UnixMilli(ms)}, nil
}

// WriteInterval appends one interval line holding h, recorded between start
// and end. start must not be before the log's start time, nor end before
// start. It stamps h's underlying histogram with the interval times; h is
// otherwise unchanged. Callers usually Reset h afterwards.
func (l *LogWriter) WriteInterval(h *Histogram, start, end time.Time) error {
	s, e := start.UnixMilli(), end.UnixMilli()
	if s < l.start.UnixMilli() {
		return fmt.Errorf("hist: write hlog interval: start %v is before the log start %v", start, l.start)
	}
	if e < s {
		return fmt.Errorf("hist: write hlog interval: end %v is before start %v", end, start)
	}
	h.h.SetStartTimeMs(s)
	h.h.SetEndTimeMs(e)
	if err := l.lw.OutputIntervalHistogram(h.h); err != nil {
		return fmt.Errorf("hist: write hlog interval: %w", err)
	}
	return nil
}

// WriteIntervalNote appends a comment line about the interval of tag
// recorded between start and end:
//
//	#[NAME Tag=TAG,START,LENGTH,NOTE]
//
// START and LENGTH are in seconds and written as in the interval's own line
// (relative to the log's base time, from millisecond times), so a reader can
// join the two by tag and start. Readers of .hlog files (HistogramLogReader,
// HistogramLogProcessor, hdrhistogram-go) skip comment lines, so the
// interval lines and their tags stay as they are. name, tag and note must
// hold no line break or ']', and name and tag no ',' or space.
func (l *LogWriter) WriteIntervalNote(name, tag string, start, end time.Time, note string) error {
	if strings.ContainsAny(name+tag+note, "\r\n]") || strings.ContainsAny(tag, ", ") || strings.ContainsAny(name, ", ") {
		return fmt.Errorf("hist: write hlog note: %q, tag %q, note %q: no line breaks or ']', and no ',' or spaces in the name and tag", name, tag, note)
	}
	s, e := start.UnixMilli(), end.UnixMilli()
	if e < s {
		return fmt.Errorf("hist: write hlog note: end %v is before start %v", end, start)
	}
	base := l.start.UnixMilli()
	st := float64(s-base) / 1000
	en := float64(e-base) / 1000
	if err := l.lw.OutputComment(fmt.Sprintf("[%s Tag=%s,%f,%f,%s]", name, tag, st, en-st, note)); err != nil {
		return fmt.Errorf("hist: write hlog note: %w", err)
	}
	return nil
}
