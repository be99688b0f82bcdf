// Package scripttest holds the host-side tests of the shell scripts users
// run (no RDMA, no guest; `go test ./...` runs them on the host, and they
// skip in a guest of the bed): scripts/ci-action.sh, the GitHub Action's
// steps, against the gate's fixtures and with stub modprobe, rdma and
// apt-cache (ciaction_test.go); scripts/hw-check.sh without RDMA and with
// stub rdmabench and perftest programs (hwcheck_test.go). Stubs are
// written into each test's temporary directory. The tests run the
// rdmabench binary $RDMABENCH_BIN (make sets it to build/rdmabench), or
// one they build.
package scripttest
