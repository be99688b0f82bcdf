// Package exp holds the one-guest experiments of the Makefile (make bench's
// comparison with perftest, make fabrics, make cliffs-test, make
// isolation-test, make dropin-perftest, make dropin-agree) and the CPU probe,
// as Go tests behind the build tag experiment: `go test ./...` (make test)
// never builds them. Each target builds the test binary
//
//	go test -c -tags experiment -o build/exp.test ./internal/e2e/exp
//
// and runs one test in the one-guest bed (build/vmexec run ... --
// build/exp.test -test.run '^TestX$'), with RDMABENCH_BIN naming the
// rdmabench under test and RDMABENCH_OUT the directory its results go to
// (/out in the bed, which is the target's build/<dir> on the host; without
// it, a temporary directory). Parameters come from environment variables
// with the defaults the targets document (BENCH_ROUNDS, FABRICS_ITERS,
// AGREE_ROUNDS, ...). Every wait has a deadline; servers are waited for by
// polling for their listening port, not by sleeping.
//
// This file has no build tag, so that the package always exists.
package exp
