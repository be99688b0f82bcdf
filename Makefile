# rdmabench. `make test` is what CI runs; `make demo` is the main job.
SHELL := /bin/bash
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
export PATH := $(dir $(GO)):$(PATH)
BUILD := build
# The guest bed (scripts/vmexec, internal/vm; docs/testbed.md): static, it is also the
# guest's /init.
VMEXEC := $(BUILD)/vmexec

.PHONY: docs
.PHONY: vmexec cntshim exp-test bench-vs-perftest dropin-perftest dropin-agree all deps launcher-deps build man package package-files package-test hw-check check unit fuzz vm-test pair-test cliffs-test mesh-test mesh-rails mesh-demo mesh-slurm mesh-ompi siw-smoke test demo bench bench-wire fabrics clean

all: build

deps:
	@if [ "$$(id -u)" = 0 ]; then scripts/install-deps.sh; \
	else echo "make deps: not root; skipping scripts/install-deps.sh (run it as root once)"; fi

# deps plus Slurm and Open MPI, for the mesh beds launched by srun or mpirun.
launcher-deps:
	@if [ "$$(id -u)" = 0 ]; then scripts/install-deps.sh --launchers; \
	else echo "make launcher-deps: not root; skipping scripts/install-deps.sh --launchers"; fi

# The identity 'rdmabench --version' prints and the JSON's tool_version records
# (internal/version): this tree's commit, "-dirty" with uncommitted changes, and the
# build date (SOURCE_DATE_EPOCH when set); RDMABENCH_VERSION=1.2.0 sets the version.
MODULE := github.com/rdmabench/rdmabench
VERSION_PKG := $(MODULE)/internal/version
COMMIT := $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null || c=$$c-dirty; echo $$c; })
BUILD_DATE := $(shell date -u $${SOURCE_DATE_EPOCH:+-d @$$SOURCE_DATE_EPOCH} +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X $(VERSION_PKG).Commit=$(COMMIT) -X $(VERSION_PKG).Date=$(BUILD_DATE) \
	$(if $(RDMABENCH_VERSION),-X $(VERSION_PKG).Version=$(RDMABENCH_VERSION))

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BUILD)/rdmabench ./cmd/rdmabench

# (built beside and renamed: a running bed keeps its binary)
vmexec:
	CGO_ENABLED=0 $(GO) build -o $(VMEXEC).new ./scripts/vmexec && mv -f $(VMEXEC).new $(VMEXEC)

# The generated parts of the docs (docs/flags.md, exit-codes.md, plots.md' kinds)
# from the command tree and the vocabularies (rdmabench gen-docs); TestGeneratedDocs
# fails when the committed docs differ.
docs: build
	$(BUILD)/rdmabench gen-docs docs

# Man pages from the command tree (rdmabench gen-man, cobra/doc): build/man/rdmabench.1,
# rdmabench-run.1, ...; read one with 'man -l build/man/rdmabench-run.1'.
man: build
	rm -rf $(BUILD)/man
	$(BUILD)/rdmabench gen-man $(BUILD)/man

# Packages in build/pkg: .deb, .rpm and .tar.gz (scripts/package: nfpm as a library, in
# its own go.mod). The version is scripts/version.sh's (git describe, else 0.0.0+g<commit>),
# in the packages and in the binary; the build date is the commit's time, so the same commit
# gives the same files. The packaged binary is linked again stripped (-s -w).
package:
	SOURCE_DATE_EPOCH=$$(scripts/version.sh --epoch) $(MAKE) --no-print-directory package-files \
		RDMABENCH_VERSION=$$(scripts/version.sh)

package-files: man
	rm -rf $(BUILD)/pkg
	cd scripts/package && $(GO) vet .   # its own module: nfpm stays out of make check and make test
	$(GO) build -ldflags "-s -w $(LDFLAGS)" -o $(BUILD)/pkg-bin/rdmabench ./cmd/rdmabench
	cd scripts/package && $(GO) run . -strict -bin $(CURDIR)/$(BUILD)/pkg-bin/rdmabench -man $(CURDIR)/$(BUILD)/man \
		-root $(CURDIR) -out $(CURDIR)/$(BUILD)/pkg -version "$(RDMABENCH_VERSION)" -date "$(BUILD_DATE)"

# Installs build/pkg's .deb on this machine (as root, Debian), checks the installed
# rdmabench, the .rpm's metadata and the tarball, then removes the package again.
# Not in make test: building nfpm (scripts/package) alone costs a fresh machine about
# a minute and a half of its 10-minute budget; run it before a release.
package-test: package
	scripts/package-test.sh

# The hardware check (docs/hardware.md) on this host's RDMA devices: rdmabench's loopback
# beside perftest's on every ACTIVE port; the report (.tar.gz) goes to build/hw-check.
# More options in HWCHECK_ARGS, e.g. HWCHECK_ARGS='-d mlx5_0 --reps 5'.
hw-check: build
	mkdir -p $(BUILD)/hw-check
	scripts/hw-check.sh --bin $(BUILD)/rdmabench -o $(BUILD)/hw-check $(HWCHECK_ARGS)

check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# RDMABENCH_BIN: the docs test (docs/docs_test.go) runs the README's and docs/' host
# code blocks with this binary.
unit: build
	RDMABENCH_BIN=$(CURDIR)/$(BUILD)/rdmabench $(GO) test -count=1 ./...

# Every package's tests in the SoftRoCE guest: one bed (vmexec bed) for the whole
# tree, each test binary run in the layout it declares (vmtest.Layout; default one),
# where RDMABENCH_REQUIRE_RDMA=1 turns every "no RDMA device" skip into a failure. No
# list of packages: a new package's tests run here as soon as it exists.
# VM_WHERE=auto runs test binaries that link neither libibverbs nor librdmacm and
# declare no layout, and those that declare vmtest.Host, on the host instead (still
# with RDMABENCH_REQUIRE_RDMA=1, so that an RDMA test there fails rather than skips).
# The same pass runs the RDMA benchmarks (verbs, -benchtime 2000x). Every test
# binary of it is built with GOEXPERIMENT=cgocheck2, so that the runtime checks
# each pointer the cgo packages (verbs, internal/clock, bench/sockeng, ...) store
# in C memory, in every test that drives them.
# VM_SKIP: tests left out (make test leaves out the pair stage's kill and stop
# cases, PAIR_KILLS).
VM_WHERE ?= guest
VM_SKIP ?=
# VM_FRESH=1: a fresh guest for each test binary (about 11 s a boot; the bed lock is
# kept). make test sets it: in a long-lived bed, after the host packages ran, the idle
# guest ran 3 times slower (docs/testbed.md, "What make test costs") and the README's
# loopback block timed out its control handshake in 3 of 3 full runs; fresh guests
# passed it.
VM_FRESH ?=
# VM_P: test binaries built or run at once (go test -p; the bed runs one at a time
# in its guest and queues the next). 1 by default: a compile or a host test beside
# the guest stretched its timed tests (TestRDMABWNoSampleStall's sample drain, the
# open-loop rate) past their bounds on a 2-core host, even with the compile at nice 0
# under qemu's -5. A host with more cores can set VM_P=2.
VM_P ?= 1
# VM_NICE: the nice of go test and its compiles (make test, as root: 19, so that
# they take only what the guest leaves idle). Host test binaries still run at
# nice 0, each in its turn from the bed, never beside a guest's tests (vmexec).
VM_NICE ?= 0
# VM_FIRST: where go test starts building: the packages whose guest stages are
# longest (bench, the end-to-end suites, docs' blocks), so that each is built
# while the guest runs the one before, and the guest never waits for the
# compiler (go test builds its packages in the order given). An order only:
# ./... after it still holds every package, and a package missing here runs
# all the same.
VM_FIRST ?= ./bench ./internal/e2e/... ./docs
VM_GOTEST = nice -n $(VM_NICE) $(GO) test -p $(VM_P) -count=1 -timeout 30m -exec $(CURDIR)/$(VMEXEC)
# The RDMA benchmarks run after the pass, in the same bed, in the packages that
# have them (found, not listed): with -bench, go test runs the test binaries one
# after another and starts the first only once every binary is built.
VM_BENCH_PKGS = $(sort $(patsubst %/,%,$(dir $(shell grep -rl --include='*_test.go' '^func BenchmarkRDMA' --exclude-dir=build .))))
vm-test: build vmexec $(BUILD)/libdrvshim.so
	RDMABENCH_BIN=$(CURDIR)/$(BUILD)/rdmabench RDMABENCH_DRVSHIM=$(CURDIR)/$(BUILD)/libdrvshim.so \
		$(VMEXEC) bed --where $(VM_WHERE) $(if $(filter 1,$(VM_FRESH)),--fresh) -- sh -ec '\
		GOEXPERIMENT=cgocheck2 $(VM_GOTEST) $(if $(VM_SKIP),-skip "$(VM_SKIP)") $(VM_FIRST) ./...; \
		GOEXPERIMENT=cgocheck2 $(VM_GOTEST) -run "^$$" -bench RDMA -benchtime 2000x $(VM_BENCH_PKGS)'

# The driver-behaviour shim (internal/drvshim/drvshim.c; docs/development.md): an
# LD_PRELOAD library that makes rxe/siw answer a few verbs as a hardware driver does.
# internal/e2e's TestDriverShim* run rdmabench and perftest under it (RDMABENCH_DRVSHIM=cxgb4, ...).
drvshim: $(BUILD)/libdrvshim.so

$(BUILD)/libdrvshim.so: internal/drvshim/drvshim.c
	@mkdir -p $(BUILD)
	gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o $@ $< -ldl

# The counting shim (internal/cntshim/cntshim.c; docs/methodology.md): an LD_PRELOAD
# library that counts clock_gettime and write calls (rxe's doorbell), for the work
# per message of rdmabench's and perftest's loops.
cntshim: $(BUILD)/libcntshim.so

$(BUILD)/libcntshim.so: internal/cntshim/cntshim.c
	@mkdir -p $(BUILD)
	gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o $@ $< -ldl -lpthread

# Two hosts: two guests joined by an emulated Ethernet wire (internal/e2e/pair, layout
# pair): server in g2, clients in g1, no -d (rxe2 chosen by route); kills and stops.
# make test runs it inside vm-test (go test ./... switches the bed to the pair layout
# for that package) without the four kill and stop cases (PAIR_KILLS: about a minute
# of deadline waits, which the fault suite covers on one host); pair-test runs all.
PAIR_KILLS := TestClientKilled|TestClientStopped|TestServerKilled|TestServerStopped
pair-test: build vmexec
	RDMABENCH_BIN=$(CURDIR)/$(BUILD)/rdmabench $(GO) test -count=1 -v -timeout 20m -exec $(CURDIR)/$(VMEXEC) ./internal/e2e/pair

# The experiments on the two- and three-guest beds (internal/e2e/exp/pair and
# internal/e2e/exp/mesh, build tag experiment, so make test never builds them): the
# package's test binary runs in guest g1 under build/vmexec, which boots the layout;
# the test writes to /out, which is build/<target> on the host. Their parameters are
# the tests' environment variables (docs/testbed.md), passed to the guest when set:
# WIRE_ROUNDS=8 make bench-wire, or make bench-wire WIRE_ROUNDS=8.
EXP_VARS := SMOKE_TIMEOUT LOSS_RATES LOSS_ITERS LOSS_DELAY LOSS_TIMEOUT \
	BIDIR_ITERS BIDIR_ROUNDS BIDIR_QP_TIMEOUT BIDIR_PIN BIDIR_RB_FLAGS BIDIR_TIMEOUT \
	WIRE_ITERS WIRE_ROUNDS WIRE_CQ_MOD WIRE_QP_TIMEOUT WIRE_PIN WIRE_RB_TASKSET WIRE_RB_FLAGS WIRE_TIMEOUT \
	DUR LOSS LOSS_AT LOSS_FOR PAIR_TIMEOUT \
	MESH_TEST_ARGS MESH_DEMO_ARGS MESH_SLURM_ARGS MESH_OMPI_ARGS MESH_KILL_ARGS KILL_ROUND_TIMEOUT MESH_SLURM_KILL MESH_TIMEOUT
# exp-run LAYOUT,PKG,TEST,TARGET,SECONDS[,MORE vmexec FLAGS]: TEST of
# internal/e2e/exp/PKG in the LAYOUT bed, its files in build/TARGET, within SECONDS
# (the bed's boot on top).
define exp-run
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/vmexec ./scripts/vmexec
	CGO_ENABLED=0 $(GO) test -c -tags experiment -o $(BUILD)/exp-$(2).test ./internal/e2e/exp/$(2)
	rm -rf $(BUILD)/$(4) && mkdir -p $(BUILD)/$(4)
	$(BUILD)/vmexec run --layout $(1) --outdir $(BUILD)/$(4) --timeout $$(( $(5) + 300 )) \
		--env RDMABENCH_OUT=/out --env RDMABENCH_BIN=$(CURDIR)/$(BUILD)/rdmabench $(6) \
		$(foreach v,$(EXP_VARS),$(if $($(v)),--env '$(v)=$($(v))')) \
		-- $(CURDIR)/$(BUILD)/exp-$(2).test -test.run '^$(3)$$' -test.v -test.timeout $(5)s
endef

# Two guests on a wire (TestSmoke): ping, ib_send_lat and rdmabench send latency
# across it on rxe2, rxe2's packet counters moving in both; build/pair-smoke/.
.PHONY: pair-smoke loss-tail pair-bidir
pair-smoke: build
	$(call exp-run,pair,pair,TestSmoke,pair-smoke,600)

# Counter timelines on a lossy wire (TestTimeline, docs/testbed.md): two guests, a
# WRITE bandwidth run with netem loss on the client's eth0 for part of it; then on the
# host the intervals where p99 rose carry retransmission counters (TestTimelineWire);
# the JSON, .hlog and timeline plot in build/pair-timeline/. About 2 minutes; not part
# of make test.
.PHONY: pair-timeline
pair-timeline: build
	$(call exp-run,pair,pair,TestTimeline,pair-timeline,$${PAIR_TIMEOUT:-600})
	set -o pipefail; RDMABENCH_TIMELINE_JSON=$(CURDIR)/$(BUILD)/pair-timeline/timeline.json \
		RDMABENCH_TIMELINE_LOSS=$$(cat $(BUILD)/pair-timeline/loss.txt) \
		$(GO) test -tags experiment -count=1 -run '^TestTimelineWire$$' -v ./bench/timeline | tee $(BUILD)/pair-timeline/check.txt
	$(BUILD)/rdmabench plot --kind timeline $(BUILD)/pair-timeline/timeline.json -o $(BUILD)/pair-timeline/timeline.svg
	@echo "pair-timeline OK: $(BUILD)/pair-timeline"

# The one-guest experiments (cliffs-test, isolation-test, dropin-perftest, dropin-agree,
# fabrics, bench's comparison with perftest) are Go tests behind the build tag
# experiment (internal/e2e/exp), run in guest g1 of the one-guest bed by build/vmexec:
# RDMABENCH_BIN names the rdmabench under test, RDMABENCH_OUT=/out is the target's
# build/<dir> on the host.
exp-test: build vmexec
	$(GO) test -c -tags experiment -o $(BUILD)/exp.test ./internal/e2e/exp

EXP_ENV = --env RDMABENCH_BIN=$(CURDIR)/$(BUILD)/rdmabench --env RDMABENCH_OUT=/out
EXP_TEST = $(CURDIR)/$(BUILD)/exp.test -test.v -test.run

# rdmabench cliffs in one SoftRoCE guest (TestCliffs, docs/cliffs.md): the
# planted load cliff found in its ladder step, cliffs along QPs 1..256 and along MRs
# 1..1024, 4 KiB random READ/WRITE over a 1 GiB region (3 GiB guest), the documents
# plotted into build/cliffs/ and checked on the host (TestCliffsFiles). About 4 minutes;
# not part of make test.
cliffs-test: exp-test
	$(GO) test -c -tags experiment -o $(BUILD)/cliffs.test ./bench/cliffs
	rm -rf $(BUILD)/cliffs && mkdir -p $(BUILD)/cliffs
	$(VMEXEC) run --timeout 900 --mem 3072 --outdir $(BUILD)/cliffs $(EXP_ENV) \
		--env RDMABENCH_CLIFFS_TEST=$(CURDIR)/$(BUILD)/cliffs.test -- $(EXP_TEST) '^TestCliffs$$' -test.timeout 780s
	RDMABENCH_CLIFFS_DIR=$(CURDIR)/$(BUILD)/cliffs $(GO) test -tags experiment -count=1 -run '^TestCliffsFiles$$' -v ./bench/cliffs
	@echo "cliffs-test OK: $(BUILD)/cliffs"

# rdmabench isolation in one SoftRoCE guest (TestIsolation, docs/isolation.md):
# the whole attacker catalogue beside a SEND latency victim in loopback, four attackers
# against a server, --max-inflation crossed (exit 1) and not (exit 0); the documents
# checked on the host (TestIsolationFiles) in build/isolation/. About 4 minutes; not
# part of make test.
.PHONY: isolation-test
isolation-test: exp-test
	rm -rf $(BUILD)/isolation && mkdir -p $(BUILD)/isolation
	$(VMEXEC) run --timeout 900 --outdir $(BUILD)/isolation $(EXP_ENV) -- $(EXP_TEST) '^TestIsolation$$' -test.timeout 840s
	RDMABENCH_ISOLATION_DIR=$(CURDIR)/$(BUILD)/isolation $(GO) test -tags experiment -count=1 -run '^TestIsolationFiles$$' -v ./bench/isolation
	@echo "isolation-test OK: $(BUILD)/isolation"

# Cluster scale: three guests on one segment (internal/e2e/exp/mesh); MPICH's mpiexec
# in guest 1 launches 'rdmabench mesh' on all three (its remote shell: the bed's agent,
# no ssh). mesh-test: a small pairs mesh (SEND, WRITE; lat, bw) and its checks;
# mesh-demo: build/mesh/mesh.json, heatmap.svg, a run with one rank killed, and the
# gate (docs/mesh.md).
mesh-test: build
	$(call exp-run,mesh,mesh,TestMesh,mesh-test,$${MESH_TIMEOUT:-400})

# Rails (docs/mesh.md): rxe3 beside rxe2 in each guest, mesh --rail-devices rxe2,rxe3,
# rail after rail and at once; build/mesh-rails/.
mesh-rails: build
	$(call exp-run,mesh,mesh,TestMeshRails,mesh-rails,$${MESH_TIMEOUT:-600})

mesh-demo: deps build
	$(call exp-run,mesh,mesh,TestDemo,mesh,$${MESH_TIMEOUT:-1800})

# The same bed as a Slurm cluster (slurmctld + slurmd in guest 1, slurmd in 2 and 3,
# munge): srun --mpi=pmi2 launches the mesh; then a run with one rank killed
# (--kill-on-bad-exit=0: the others finish, rank 0 exits 6). build/mesh-slurm/.
mesh-slurm: launcher-deps build
	$(call exp-run,mesh,mesh,TestSlurm,mesh-slurm,$${MESH_TIMEOUT:-900})

# Open MPI's mpirun on the same bed: orted in guests 2 and 3 (its remote shell: the
# bed's agent), the ranks bootstrap through PMIx (a -tags pmix build). build/mesh-ompi/.
mesh-ompi: launcher-deps build
	$(GO) build -tags pmix -o $(BUILD)/rdmabench-pmix ./cmd/rdmabench
	$(call exp-run,mesh,mesh,TestOMPI,mesh-ompi,$${MESH_TIMEOUT:-900},--env RDMABENCH_PMIX_BIN=$(CURDIR)/$(BUILD)/rdmabench-pmix)

# The drop-in against Debian's real perftest in one guest (issue 22): all eight
# tools, both directions (perftest's server
# with the drop-in's client, and the other way), RC, without and with -R
# (rdma_cm QPs on rxe1), then the UC and UD pairs perftest allows (--qp, without -R);
# make test runs some of these pairs (internal/e2e). Then the modes, one pair
# at a time: -a (every size, 2 B to 8 MiB: one row each), -D 2 and -b in the tools that
# take them. Last -D 2 in the four latency tools, without and with -R (each
# pair done within 8 s; about 50 s in all). TestDropinPerftest, one subtest per step
# (rc, rdma_cm, qp, all_sizes, duration_bw, bidir, duration_lat, duration_lat_cm);
# every end's output in build/dropin-perftest/STEP/, and the drop-in's recording of each
# exchange (NAME.rec.json, bench/perftest/wire/testdata/exchanges has a selection).
# PERFTEST_DIR=DIR runs perftest's tools from DIR (a perftest build, 6.28 or 6.29, on
# this host: the guest sees the host's files) instead of Debian's 6.06.
PERFTEST_DIR ?=
dropin-perftest: exp-test
	rm -rf $(BUILD)/dropin-perftest && mkdir -p $(BUILD)/dropin-perftest
	$(VMEXEC) run --timeout 1200 --outdir $(BUILD)/dropin-perftest $(EXP_ENV) $(if $(PERFTEST_DIR),--env RDMABENCH_PERFTEST_DIR=$(abspath $(PERFTEST_DIR))) \
		-- $(EXP_TEST) '^TestDropinPerftest$$' -test.timeout 1080s

# The drop-in's figures against perftest's (docs/perftest.md, "Agreement with
# perftest"): AGREE_ROUNDS rounds in one guest of perftest with perftest, perftest's
# server with the drop-in's client and the drop-in's server with perftest's client,
# for one test of each of the eight tools (AGREE_TEST="ib_write_bw -n 2000 -s 4096" runs one instead); the
# medians and ratios come from scripts/dropinagree on the host. PERFTEST_DIR as in dropin-perftest.
# Each server runs on CPU 1 and each client on CPU 0; AGREE_PIN=S,C picks others, AGREE_PIN=off none.
AGREE_ROUNDS ?= 5
AGREE_TEST ?=
AGREE_PIN ?=
dropin-agree: exp-test
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/dropinagree ./scripts/dropinagree
	rm -rf $(BUILD)/agree && mkdir -p $(BUILD)/agree
	t=$$((300 + 60 * $(AGREE_ROUNDS))); $(VMEXEC) run --timeout $$t --outdir $(BUILD)/agree $(EXP_ENV) \
		$(if $(PERFTEST_DIR),--env RDMABENCH_PERFTEST_DIR=$(abspath $(PERFTEST_DIR))) \
		--env AGREE_ROUNDS=$(AGREE_ROUNDS) --env 'AGREE_TEST=$(AGREE_TEST)' --env AGREE_PIN=$(AGREE_PIN) -- $(EXP_TEST) '^TestDropinAgree$$' -test.timeout $$((t - 60))s || true
	$(BUILD)/dropinagree -dir $(BUILD)/agree

# soft-iWARP beside soft-RoCE in one guest (fails if siw.ko was not built).
siw-smoke: vmexec
	$(VMEXEC) run --siw require -- sh -c 'ibv_devinfo -d siw1 | grep -E "transport|PORT_ACTIVE" || exit 1; \
		ib_send_lat -d siw1 -R -n 200 >/tmp/srv.txt 2>&1 & s=$$!; \
		$(CURDIR)/$(VMEXEC) wait-listen 18515 30 && ib_send_lat -d siw1 -R -n 200 203.0.113.1 && wait $$s'

# Fuzz every parser of network bytes for a short time (FUZZTIME each: a
# count of inputs, not a duration, which can end a run with a spurious
# "context deadline exceeded"), starting from the committed corpora
# (testdata/fuzz/FuzzX); 'make unit' already replays those corpora as tests.
# Each fuzzed package is built once, instrumented (go test -c -fuzz), into
# build/fuzz, and its binary runs each of its targets in the package's
# directory (where testdata/fuzz is) with go test's own cache of generated
# inputs: one link per package instead of one per target. FUZZMINTIME bounds
# the minimizing of each new input (go test's default is 60 s each: FuzzPlot
# spent 45 of its 51 s there).
FUZZTIME ?= 10000x
FUZZMINTIME ?= 200x
FUZZ = internal/vm/proto:FuzzDecode bench/proto:FuzzReadFrame bench/perftest/wire:FuzzExchange bench/perftest/wire:FuzzDest bench/perftest/wire:FuzzDestBinary bench/mesh/boot:FuzzParseLine bench/mesh:FuzzLink bench/perftest:FuzzDecodeReport bench/perftest:FuzzParsePrinted bench/spec:FuzzSpecDecode bench/endpoint:FuzzQPInfoDecode bench:FuzzHandshake bench/endpoint:FuzzCMPrivate bench/result:FuzzOpen bench/compare:FuzzCompare bench/plot:FuzzPlot bench/fabric:FuzzReport bench/perftest:FuzzImport
FUZZ_PKGS = $(sort $(foreach t,$(FUZZ),$(firstword $(subst :, ,$(t)))))
fuzz:
	@mkdir -p $(BUILD)/fuzz; cache=$$($(GO) env GOCACHE)/fuzz; \
	for p in $(FUZZ_PKGS); do \
		$(GO) test -c -fuzz . -o $(BUILD)/fuzz/$$(echo $$p | tr / _).test ./$$p || exit 1; \
	done; \
	for t in $(FUZZ); do p=$${t%%:*}; n=$${t#*:}; \
		echo "fuzz $$n ($$p, $(FUZZTIME))"; \
		( cd $$p && $(CURDIR)/$(BUILD)/fuzz/$$(echo $$p | tr / _).test -test.run '^$$' -test.fuzz "^$$n$$" \
			-test.fuzztime $(FUZZTIME) -test.fuzzminimizetime $(FUZZMINTIME) -test.parallel 2 \
			-test.fuzzcachedir $$cache/$(MODULE)/$$p ) >/tmp/fuzz-$$n.log 2>&1 \
			|| { tail -30 /tmp/fuzz-$$n.log; exit 1; }; \
	done

# make test's vm-test (VM_WHERE=auto) is also its unit stage: it runs the test
# binaries that link neither libibverbs nor librdmacm, and the tests that need no
# device (vmtest.Host, vmtest.GuestTests), on the host, where they are 6 to 10 times
# as fast as under TCG (hist: 12 s on the host, over 80 s in the guest), and the
# rest in the guest.
# As root, check and fuzz run in the background (BG, BG_FUZZ; their output in
# build/test/, printed at the end) while vm-test runs. Its compiles run
# at nice 19 (VM_NICE), three test binaries at once (VM_P=3: one may wait for
# the guest and one for a host turn while the third is built). The guests (nice
# -5) and the host test binaries (nice 0, one at a time with the guests: the
# bed's turns) take what they need, the compiles what is left, check and fuzz
# the rest. Under --fresh the bed boots each next guest in the background
# (SCHED_IDLE) and keeps it paused until its turn (docs/testbed.md). Not root
# (no lower nice for the tests than for the builds), the stages run one after
# another. Everything is built with GOEXPERIMENT=cgocheck2: go vet's build
# of the standard library is then the one the test binaries use.
TEST_VM = VM_WHERE=auto VM_SKIP='$(PAIR_KILLS)' VM_FRESH=1
# BG: how check runs in the background: SCHED_IDLE, below even the nice-19
# compiles that the first guest waits for. BG_FUZZ: how fuzz runs: nice 10. Go's
# fuzzing coordinator fails a worker that spends 10 s on one input ("fuzzing
# process hung or terminated unexpectedly"): under SCHED_IDLE one starved for
# that long, and at nice 19 one did too on a host that let the guests run only
# at nice 0 (FuzzCompare, 262 of 387 seeds; it passes alone in 1 s). At nice 10
# it gets 5 % of a core beside two busy guests at nice 0 (1.7 % at -5), and
# still yields to them.
BG = chrt --idle 0
BG_FUZZ = nice -n 10
test: export GOEXPERIMENT = cgocheck2
test: deps
	@if [ "$$(id -u)" != 0 ]; then \
		$(MAKE) --no-print-directory check fuzz && $(MAKE) --no-print-directory vm-test $(TEST_VM); exit $$?; \
	fi; \
	mkdir -p $(BUILD)/test; rm -f $(BUILD)/test/*.rc; \
	( $(BG) $(MAKE) --no-print-directory check >$(BUILD)/test/check.log 2>&1; echo $$? >$(BUILD)/test/check.rc; \
	  $(BG_FUZZ) $(MAKE) --no-print-directory fuzz >$(BUILD)/test/fuzz.log 2>&1; echo $$? >$(BUILD)/test/fuzz.rc ) & \
	echo "make test: check ($(BG)) and fuzz ($(BG_FUZZ)) in the background ($(BUILD)/test/check.log, fuzz.log)"; \
	$(MAKE) --no-print-directory vm-test $(TEST_VM) VM_P=3 VM_NICE=19; vm=$$?; \
	wait; rc=$$vm; \
	for st in check fuzz; do \
		echo "---- make test: $$st ($(BUILD)/test/$$st.log) ----"; cat $(BUILD)/test/$$st.log 2>/dev/null; \
		r=$$(cat $(BUILD)/test/$$st.rc 2>/dev/null || echo 1); \
		if [ "$$r" != 0 ]; then echo "make test: $$st FAILED (exit $$r)"; rc=1; fi; \
	done; \
	if [ $$vm != 0 ]; then echo "make test: vm-test FAILED (exit $$vm)"; fi; \
	if [ $$rc = 0 ]; then echo "make test: PASS"; fi; exit $$rc

# The main job: a real loopback latency and bandwidth sweep on SoftRoCE.
demo: deps build vmexec
	PATH=$(CURDIR)/$(BUILD):$$PATH $(VMEXEC) run --outdir $(BUILD)/demo -- sh -c \
		'rdmabench devices && rdmabench loopback --op send,write,read --mode lat,bw --size 2,4K,64K --iters 2000 --json /out/demo.json'
	@echo "JSON result: $(BUILD)/demo/demo.json"

bench: deps build
	$(MAKE) --no-print-directory bench-vs-perftest
	$(MAKE) --no-print-directory loss-tail pair-bidir bench-wire

# make bench's first part (TestBenchVsPerftest, docs/testbed.md): rdmabench and perftest
# side by side in one guest, interleaved ABBA BAAB: 2 B SEND/WRITE/READ latency (also
# inline), 64 KiB WRITE bandwidth (1 QP, 4 QPs, rdma_cm, -b), peak RSS growth; the raw
# outputs and summary.txt in build/bench-vs-perftest/ (re-read them with
# 'go run ./scripts/vsperftest -dir build/bench-vs-perftest' and the same parameters).
# BENCH_VM_APPEND: extra guest kernel arguments, e.g. 'tsc=reliable' for the TSC
# clocksource instead of HPET (see the note in the report).
BENCH_ROUNDS ?= 1
BENCH_ITERS ?= 20000
BENCH_BW_DURATION ?= 3
BENCH_RSS_SMALL ?= 10000
BENCH_RSS_LARGE ?= 1000000
bench-vs-perftest: exp-test
	rm -rf $(BUILD)/bench-vs-perftest && mkdir -p $(BUILD)/bench-vs-perftest
	t=$$((2 * (100 + $(BENCH_ROUNDS) * (24 * (10 + $(BENCH_ITERS) / 10000) + 32 * ($(BENCH_BW_DURATION) + 15)) \
		+ ($(BENCH_RSS_SMALL) + $(BENCH_RSS_LARGE)) / 10000) + 120)); [ $$t -ge 600 ] || t=600; \
	$(VMEXEC) run --timeout $$t --outdir $(BUILD)/bench-vs-perftest $(EXP_ENV) $(if $(BENCH_VM_APPEND),--append '$(BENCH_VM_APPEND)') \
		--env BENCH_ROUNDS=$(BENCH_ROUNDS) --env BENCH_ITERS=$(BENCH_ITERS) --env BENCH_BW_DURATION=$(BENCH_BW_DURATION) \
		--env BENCH_RSS_SMALL=$(BENCH_RSS_SMALL) --env BENCH_RSS_LARGE=$(BENCH_RSS_LARGE) --env BENCH_HOST_NPROC=$$(nproc) \
		--env "BENCH_HOST_LOAD=$$(cut -d' ' -f1-3 /proc/loadavg)" --env BENCH_HOST_GUESTS=$$(pgrep -c qemu-system-x86 || true) \
		-- $(EXP_TEST) '^TestBenchVsPerftest$$' -test.timeout $$((t - 60))s


# Loss and the tail on the two-guest wire (TestLossTail): netem loss rates on the
# client's eth0, SEND and WRITE latency and WRITE bandwidth at each; build/loss-tail/
# loss-<rate>.json, table.md and latency.svg.
loss-tail: build
	$(call exp-run,pair,pair,TestLossTail,loss-tail,$${LOSS_TIMEOUT:-1500})

# Bidirectional 64 KiB WRITE bandwidth across the wire (TestBidir), rdmabench -b
# against ib_write_bw -b in ABBA BAAB rounds; build/pair-bidir/.
pair-bidir: build
	$(call exp-run,pair,pair,TestBidir,pair-bidir,$${BIDIR_TIMEOUT:-1200})

# 64 KiB WRITE bandwidth across the two-guest wire (TestWireBW), rdmabench against
# ib_write_bw in alternating rounds: the ratio of medians with its bootstrap
# interval (WIRE_ROUNDS, WIRE_ITERS: see the test's comment); build/pair-wire-bw/.
bench-wire: deps build
	@echo "host load before: $$(uptime)"
	$(call exp-run,pair,pair,TestWireBW,pair-wire-bw,$${WIRE_TIMEOUT:-1800})
	@echo "host load after: $$(uptime)"

# The fabric comparison on this bed (TestFabrics, docs/fabrics.md): SEND, WRITE, READ on
# rxe, siw and TCP in one guest, then build/fabrics/report.md and the plot.
# FABRICS_SIW=auto goes on without siw1, off runs RoCE and TCP only.
FABRICS_SIW ?= require
FABRICS_ITERS ?= 2000
FABRICS_BW_DURATION ?= 2
FABRICS_TIMEOUT ?= 900
fabrics: deps exp-test
	rm -rf $(BUILD)/fabrics && mkdir -p $(BUILD)/fabrics
	$(VMEXEC) run --siw $(FABRICS_SIW) --timeout $(FABRICS_TIMEOUT) --outdir $(BUILD)/fabrics $(EXP_ENV) \
		--env FABRICS_SIW=$(FABRICS_SIW) --env FABRICS_ITERS=$(FABRICS_ITERS) --env FABRICS_BW_DURATION=$(FABRICS_BW_DURATION) \
		-- $(EXP_TEST) '^TestFabrics$$' -test.timeout $$(($(FABRICS_TIMEOUT) - 60))s
	@echo "fabrics: wrote $(BUILD)/fabrics/report.md and $(BUILD)/fabrics/latency.svg"

clean:
	rm -rf $(BUILD)
