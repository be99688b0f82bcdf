// Package server is `rdmabench server`: the accept loop and its admission
// (protected mode, --allow, the handshake's deadline and caps, dropping
// the oldest startup), one client's session (authentication, the device by
// route, the busy lock, idle and session limits, --once), and the server's
// side of each test: its admission to the resource budget, the connection
// of its data plane (by exchange, rdma_cm's listener or TCP), then its
// kind's server half (bench/kinds' Serve). It imports neither the client
// nor bench; bench's RunLoopback runs one in-process.
package server
