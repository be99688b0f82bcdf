// Package hist records latency distributions in nanoseconds and reports
// honest percentiles from them.
//
// A [Histogram] wraps an HdrHistogram (github.com/HdrHistogram/hdrhistogram-go)
// covering 1 ns to 1 hour with 3 significant decimal digits, so any recorded
// value is known to within 0.1 %. Its memory is fixed when it is created (see
// [Histogram.ByteSize]) and does not grow with the number of recordings.
//
// # Units
//
// Every value going in or coming out is in nanoseconds (int64), except where a
// function takes an explicit unit divisor ([Value.Format], [Histogram.WriteHGRM]).
//
// # Range
//
// No value is ever dropped. Negative values, which only a clock error can
// produce, are recorded as 0. Values above 1 hour are counted in the bucket of
// 1 hour, while the exact maximum keeps the real value, so [Histogram.Max] is
// always the true maximum. The exact minimum is kept the same way.
//
// # Percentiles
//
// [Histogram.Percentile] takes a percent in [0, 100]: 99.9 means p99.9. It never
// takes a quantile; passing 0.999 asks for p0.999, a value near the minimum.
//
// Rank convention: for N recorded values, percentile p selects the sample at
// rank round(p/100*N) (halves round up; at least rank 1), counting from 1 in
// ascending order, and reports the highest value equivalent to it at the
// histogram's resolution, clamped to the exact [min, max]. This is what
// hdrhistogram-go v1.4.0 does (percentileRank in hdr.go). The Java and C
// implementations use the ceiling rank ceil(p/100*N) instead, so on small
// data sets they can pick the next sample up: for the values 1..10, p21 is 2
// here and 3 in Java. The two agree once N is large enough for the percentile
// to be backed (below).
//
// Percentile 0 reports the exact minimum. Percentile 100 is not a percentile
// and is never backed: use [Histogram.Max].
//
// # Backing (the n/a rule) and confidence intervals
//
// [Histogram.PercentileCI] gives each percentile a distribution-free
// confidence interval (95 % by default): the order statistics X(lo) and
// X(hi) whose ranks the binomial distribution of the number of samples
// below the true percentile puts around p/100*N ([OrderStatCI]). A
// percentile is reported only when that interval stays inside the data:
// when even the largest sample lies above the true p99 too rarely, the
// data cannot say where p99 is. Thus, at 95 %, p50 needs 6 samples, p90
// 36, p99 368, p99.9 3,688 and p99.99 36,887 (q^N <= 2.5 %). Below that,
// [Histogram.Percentile] returns ok == false and a [Summary] holds a
// [Value] that prints as "n/a" and marshals to JSON null, rather than a
// number that is really the maximum under another name.
//
// # Mean and standard deviation
//
// [Histogram.Mean] and [Histogram.StdDev] are computed from bucket midpoints,
// so they carry the same 0.1 % resolution as the percentiles.
//
// # Formats
//
// [Histogram.Encode] and [Decode] use HdrHistogram's compressed V2 base64 form
// ("HISTF..."), [Histogram.WriteHGRM] prints the classic .hgrm percentile
// table and [LogWriter] writes .hlog interval logs, all readable by the Java
// and C HdrHistogram tools (HistogramLogProcessor, HistogramLogAnalyzer, the
// plotFiles web plotter).
//
// # Threading
//
// A Histogram is not safe for concurrent use and must not be copied by value
// (a copy shares the bucket array). Give each engine thread its own
// Histogram, record into it outside the timed region, and combine them with
// [Histogram.Merge] at the end of each interval. Concurrent reads are safe
// only while nothing records, resets or merges into it.
package hist
