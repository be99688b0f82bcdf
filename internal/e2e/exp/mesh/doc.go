// Package mesh holds the experiments on the three-guest bed (vmtest.Mesh:
// g1..g3 on 198.51.100.1-3, one segment, rxe2 on each eth0), behind the build
// tag experiment so that make test never builds them. The test binary runs
// in g1 and launches 'rdmabench mesh' on all three guests with the launcher
// each experiment is about; rank i runs in guest i+1:
//
//	TestMesh   make mesh-test: MPICH's mpiexec (hydra), a small pairs mesh and its checks
//	TestDemo   make mesh-demo: the same with 1000s of iterations, the heatmaps, a run
//	           with rank 2 killed, and the gate
//	TestSlurm  make mesh-slurm: a Slurm cluster in the guests, srun --mpi=pmi2
//	TestOMPI   make mesh-ompi: Open MPI's mpirun, PMIx (a -tags pmix build)
//
// The bed has no ssh: hydra's and Open MPI's remote shell is the test binary
// itself (expkit's rsh helper: 'sh -c CMD' in the named guest through the
// bed's agent, vmtest.Peer.Command), so both launchers start their proxies
// and daemons in the other guests as over ssh. Parameters come from the
// environment with the old scripts' names and defaults (MESH_TEST_ARGS,
// MESH_DEMO_ARGS, MESH_SLURM_ARGS, MESH_OMPI_ARGS, MESH_KILL_ARGS,
// KILL_ROUND_TIMEOUT, MESH_SLURM_KILL, MESH_TIMEOUT); files go to
// $RDMABENCH_OUT (the Makefile: /out, which is build/<target> on the host).
package mesh
