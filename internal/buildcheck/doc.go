// Package buildcheck holds the tests of the module's build graph, run on the
// host with the go tool: the layer table (layers.go: every package in one
// layer, imports pointing down, no cgo under a pure layer; TestLayers, and
// TestLayersDoc against docs/architecture.md), which packages build without
// cgo, what the binary links, what a build without cgo or without
// rdma-core's .pc files says. They live apart from the packages they check
// so that those packages' test binaries, which run in the test bed's
// guests, never start the go tool under emulation. Its one piece of code is
// the layer table.
package buildcheck
