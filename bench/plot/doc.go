// Package plot draws result documents with gonum/plot: latency against
// percentile, CDFs, latency and bandwidth against message size (SVG, PNG,
// PDF). Pure Go.
package plot
