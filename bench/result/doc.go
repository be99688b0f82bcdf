// Package result is rdmabench's result schema: the JSON Document a run
// writes (environment, one Result per test, histograms, port counters), the
// vocabulary of ops, modes, QP types, transports and units, the port
// counters that signal trouble (counters.go), and reading and writing it.
// schema.json (JSON Schema) describes the same document for other tools.
//
// It depends on hist and the standard library only, so pure data tools
// (report, compare, plot) build without cgo or rdma-core.
package result
