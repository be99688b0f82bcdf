// Package expkit is what the pair and mesh experiments (internal/e2e/exp/pair,
// internal/e2e/exp/mesh; build tag experiment) share: their parameters from the
// environment, their output directory, the helpers the test binary runs on the
// other guests (a server with rxe2's counters around it, the CPU and packet
// sampler, a launcher's remote shell), and waits with deadlines for a
// listening port or a line of output. Every file but this one carries the
// build tag experiment, so make test never builds the package.
package expkit
