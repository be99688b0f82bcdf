// Package boot is how the ranks of a mesh run find each other: through the
// launcher that started them (mpiexec, srun), never through a coordinator of
// rdmabench's own. It offers what a mesh needs of a launcher and no more: who
// am I (rank, size), an all-gather of a small blob per rank, and a barrier.
//
// The launcher's interface is PMI-1's wire protocol (pmi.go), spoken in pure
// Go over the socket the launcher passes in PMI_FD: MPICH's hydra (mpiexec,
// mpirun.mpich) and Slurm's srun --mpi=pmi2 serve it, so the binary needs no
// MPI or PMI library. Local (local.go) is an in-process group for tests.
package boot

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// Bootstrap is the launcher's side of a run. Every call of Allgather and
// Barrier is collective: every rank makes the same calls in the same order.
// A call that cannot finish by ctx's deadline (a rank died, the launcher
// hangs) returns an error and leaves the Bootstrap broken: later calls fail
// at once with ErrBroken.
type Bootstrap interface {
	Rank() int // 0..Size()-1
	Size() int
	// Launcher names the launcher interface, e.g. "pmi-1 (PMI_FD)".
	Launcher() string
	// Allgather publishes data as this rank's value of name and returns
	// every rank's value, in rank order, once all have published.
	Allgather(ctx context.Context, name string, data []byte) ([][]byte, error)
	// Barrier returns once every rank has entered it.
	Barrier(ctx context.Context) error
	// Close tells the launcher this rank is done (PMI finalize).
	Close() error
}

// ErrBroken is returned by every call after one failed or timed out: the
// launcher's collective state is then unknown.
var ErrBroken = errors.New("boot: an earlier launcher call failed; no more collectives")

// NotLaunchedError says the process was not started by a launcher this
// package speaks to.
type NotLaunchedError struct{}

func (NotLaunchedError) Error() string {
	return "not started by a PMI launcher (no PMI_FD in the environment): start the ranks with " +
		"mpiexec (MPICH hydra) or srun --mpi=pmi2 (Slurm); see docs/mesh.md"
}

// OpError is a failed launcher operation.
type OpError struct {
	Op  string // e.g. "barrier", "put", "get"
	Err error
}

func (e *OpError) Error() string { return fmt.Sprintf("boot: %s: %v", e.Op, e.Err) }
func (e *OpError) Unwrap() error { return e.Err }

// pmixDial is the PMIx client (pmix.go), set only in builds with -tags pmix.
var pmixDial func() (Bootstrap, error)

// FromEnv connects to the launcher named by the environment: PMI_FD (with
// PMI_RANK, PMI_SIZE) for PMI-1; PMIX_NAMESPACE for PMIx (Open MPI's mpirun,
// srun --mpi=pmix), in a binary built with -tags pmix.
func FromEnv() (Bootstrap, error) {
	if os.Getenv("PMI_FD") != "" {
		return DialPMI(os.Getenv("PMI_FD"), os.Getenv("PMI_RANK"), os.Getenv("PMI_SIZE"))
	}
	if os.Getenv("PMIX_NAMESPACE") != "" {
		if pmixDial == nil {
			return nil, &OpError{"init", errors.New("started by a PMIx launcher (Open MPI's mpirun, srun --mpi=pmix), " +
				"but this rdmabench was built without PMIx: rebuild with 'go build -tags pmix' (needs libpmix-dev), " +
				"or launch with MPICH's mpiexec or srun --mpi=pmi2 (see docs/mesh.md)")}
		}
		return pmixDial()
	}
	return nil, NotLaunchedError{}
}
