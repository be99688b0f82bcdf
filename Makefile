# rdmabench. `make test` is what CI runs; `make demo` is the main job.
SHELL := /bin/bash
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
export PATH := $(dir $(GO)):$(PATH)
BUILD := build
VM := scripts/vm-run.sh

.PHONY: cntshim dropin-perftest dropin-agree all deps launcher-deps build man package package-files package-test script-test hw-check check unit fuzz vm-test pair-test pair-core cliffs-test mesh-test mesh-demo mesh-slurm mesh-ompi siw-smoke test demo bench bench-wire fabrics clean

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
VERSION_PKG := github.com/rdmabench/rdmabench/internal/version
COMMIT := $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null || c=$$c-dirty; echo $$c; })
BUILD_DATE := $(shell date -u $${SOURCE_DATE_EPOCH:+-d @$$SOURCE_DATE_EPOCH} +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X $(VERSION_PKG).Commit=$(COMMIT) -X $(VERSION_PKG).Date=$(BUILD_DATE) \
	$(if $(RDMABENCH_VERSION),-X $(VERSION_PKG).Version=$(RDMABENCH_VERSION))

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BUILD)/rdmabench ./cmd/rdmabench

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

# Host-side tests of the test bed's and the CI action's scripts (no guest boot):
# vm-run.sh's accelerator choice (KVM probe, TCG fallback); scripts/ci-action.sh, the
# GitHub Action's steps (gate on fixtures, install and rxe logic with stubs);
# scripts/hw-check.sh without RDMA and with stub rdmabench and perftest.
script-test: build
	scripts/vm-accel-test.sh
	scripts/ci-action-test.sh
	scripts/hw-check-test.sh

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

# Test binaries run inside the SoftRoCE guest, where RDMABENCH_REQUIRE_RDMA=1
# turns every "no RDMA device" skip into a failure.
vm-test: build $(BUILD)/libdrvshim.so
	$(GO) test -c -o $(BUILD)/verbs.test ./verbs
	GOEXPERIMENT=cgocheck2 $(GO) test -c -o $(BUILD)/verbs-cgocheck2.test ./verbs
	$(GO) test -c -o $(BUILD)/bench.test ./bench
	$(GO) test -c -o $(BUILD)/mr.test ./bench/mr
	GOEXPERIMENT=cgocheck2 $(GO) test -c -o $(BUILD)/sockeng-cgocheck2.test ./bench/sockeng
	CGO_ENABLED=0 $(GO) test -c -o $(BUILD)/result.test ./bench/result
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/faults ./scripts/faults
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/meshcheck ./scripts/meshcheck
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/jcheck ./scripts/jcheck
	$(GO) test -count=1 -run '^TestGuestScript$$' ./docs -args -guest-script $(CURDIR)/$(BUILD)/docs-guest.sh
	@command -v mpiexec.hydra >/dev/null && command -v hydra_pmi_proxy >/dev/null \
		|| { echo "vm-test: mpiexec.hydra not found: run scripts/install-deps.sh (Debian package mpich)"; exit 2; }
	$(VM) --siw require --numa 2 --timeout 900 --bin $(BUILD)/rdmabench --bin $(BUILD)/verbs.test --bin $(BUILD)/verbs-cgocheck2.test \
		--bin $(BUILD)/bench.test --bin $(BUILD)/mr.test --bin $(BUILD)/sockeng-cgocheck2.test --bin $(BUILD)/result.test \
		--bin $(BUILD)/faults --bin $(BUILD)/meshcheck --bin $(BUILD)/jcheck --bin $$(command -v mpiexec.hydra) --bin $$(command -v hydra_pmi_proxy) \
		--file $(BUILD)/libdrvshim.so --file scripts/guest-test.sh --file scripts/mesh-guest-local.sh --file scripts/dropin-guest.sh --file scripts/dropin-perftest.sh --file scripts/dropin-lib.sh --file scripts/drvshim-guest.sh --file scripts/hw-check.sh --file $(BUILD)/docs-guest.sh --env RDMABENCH_REQUIRE_RDMA=1 \
		-- sh /work/guest-test.sh

# The driver-behaviour shim (internal/drvshim/drvshim.c; docs/development.md): an
# LD_PRELOAD library that makes rxe/siw answer a few verbs as a hardware driver does.
# guest-test.sh runs rdmabench and perftest under it (RDMABENCH_DRVSHIM=cxgb4, ...).
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

# Two hosts: two guests joined by an emulated Ethernet wire (scripts/vm-pair.sh);
# server in one, client in the other, no -d (rxe2 chosen by route); kills and stops.
# make test runs pair-core: the same without the four kill and stop cases (about a
# minute of deadline waits), which the fault suite covers on one host.
pair-test: build
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/jcheck ./scripts/jcheck
	scripts/pair-test.sh

pair-core: build
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/jcheck ./scripts/jcheck
	PAIR_CASES=core scripts/pair-test.sh

# Counter timelines on a lossy wire (scripts/pair-timeline.sh, docs/testbed.md): two
# guests, a WRITE latency run with netem loss on the client's eth0 for part of it; the
# intervals where p99 rose carry retransmission counters (TestTimelineWire); the JSON,
# .hlog and timeline plot in build/pair-timeline/. About 2 minutes; not part of make test.
.PHONY: pair-timeline
pair-timeline: build
	scripts/pair-timeline.sh

# rdmabench cliffs in one SoftRoCE guest (scripts/cliffs-test.sh, docs/cliffs.md): the
# planted load cliff found in its ladder step, cliffs along QPs 1..256 and along MRs
# 1..1024, 4 KiB random READ/WRITE over a 1 GiB region (3 GiB guest), the documents
# checked and plotted into build/cliffs/. About 4 minutes; not part of make test.
cliffs-test: build
	scripts/cliffs-test.sh

# rdmabench isolation in one SoftRoCE guest (scripts/isolation-test.sh, docs/isolation.md):
# the whole attacker catalogue beside a SEND latency victim in loopback, four attackers
# against a server, --max-inflation crossed (exit 1) and not (exit 0); the documents
# checked on the host into build/isolation/. About 4 minutes; not part of make test.
.PHONY: isolation-test
isolation-test: build
	scripts/isolation-test.sh

# Cluster scale: three guests on one segment (scripts/vm-mesh.sh); MPICH's mpiexec in
# guest 1 launches 'rdmabench mesh' on all three over ssh. mesh-test: a small pairs
# mesh (SEND, WRITE; lat, bw) and its checks; mesh-demo: build/mesh/mesh.json,
# heatmap.svg, a run with one rank killed, and the gate (docs/mesh.md).
mesh-test: build
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/meshcheck ./scripts/meshcheck
	scripts/mesh-test.sh

mesh-demo: deps build
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/meshcheck ./scripts/meshcheck
	scripts/mesh-demo.sh

# The same bed as a Slurm cluster (slurmctld + slurmd in guest 1, slurmd in 2 and 3,
# munge): srun --mpi=pmi2 launches the mesh; then a run with one rank killed
# (--kill-on-bad-exit=0: the others finish, rank 0 exits 6). build/mesh-slurm/.
mesh-slurm: launcher-deps build
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/meshcheck ./scripts/meshcheck
	scripts/mesh-slurm.sh

# Open MPI's mpirun on the same bed: orted over ssh in guests 2 and 3, the ranks
# bootstrap through PMIx (a -tags pmix build). build/mesh-ompi/.
mesh-ompi: launcher-deps build
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/meshcheck ./scripts/meshcheck
	$(GO) build -tags pmix -o $(BUILD)/rdmabench-pmix ./cmd/rdmabench
	scripts/mesh-ompi.sh

# The drop-in against Debian's real perftest in one guest (issue 22): all eight
# tools, both directions (perftest's server
# with the drop-in's client, and the other way), RC, without and with -R
# (rdma_cm QPs on rxe1), then the UC and UD pairs perftest allows (--qp, without -R);
# make test runs some of these pairs (scripts/dropin-guest.sh). Then the modes, one pair
# at a time: -a (every size, 2 B to 8 MiB: one row each), -D 2 and -b in the tools that
# take them. Last -D 2 in the four latency tools, without and with -R (DMAX: each
# pair done within 8 s; about 50 s in all).
dropin-perftest: build
	$(VM) --bin $(BUILD)/rdmabench --file scripts/dropin-perftest.sh --file scripts/dropin-lib.sh -- \
		sh -c 'sh /work/dropin-perftest.sh -j && sh /work/dropin-perftest.sh -j -R && sh /work/dropin-perftest.sh -j --qp && \
		ROWS=23 TMO=200 PORTS=18700 sh /work/dropin-perftest.sh ib_write_lat ib_send_lat ib_read_lat ib_send_bw ib_write_bw ib_read_bw -- -a -n 5 && \
		PORTS=18720 sh /work/dropin-perftest.sh ib_write_bw ib_send_bw ib_read_bw ib_atomic_bw -- -D 2 && \
		PORTS=18740 sh /work/dropin-perftest.sh -j ib_write_bw ib_send_bw ib_read_bw -- -b -n 300 && \
		DMAX=8 PORTS=18760 sh /work/dropin-perftest.sh ib_send_lat ib_write_lat ib_read_lat ib_atomic_lat -- -D 2 && \
		DMAX=8 PORTS=18880 sh /work/dropin-perftest.sh -R ib_send_lat ib_write_lat ib_read_lat ib_atomic_lat -- -D 2'

# The drop-in's figures against perftest's (docs/perftest.md, "Agreement with
# perftest"): AGREE_ROUNDS rounds in one guest of perftest with perftest, perftest's
# server with the drop-in's client and the drop-in's server with perftest's client,
# for one test of each of the eight tools (AGREE_TEST="ib_write_bw -n 2000 -s 4096" runs one instead); the
# medians and ratios come from scripts/dropinagree on the host.
AGREE_ROUNDS ?= 5
AGREE_TEST ?=
dropin-agree: build
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/dropinagree ./scripts/dropinagree
	rm -rf $(BUILD)/agree && mkdir -p $(BUILD)/agree
	$(VM) --bin $(BUILD)/rdmabench --file scripts/dropin-perftest-agree.sh --file scripts/dropin-lib.sh --outdir $(BUILD)/agree -- \
		sh /work/dropin-perftest-agree.sh $(AGREE_ROUNDS) $(AGREE_TEST) || true
	$(BUILD)/dropinagree -dir $(BUILD)/agree

# soft-iWARP beside soft-RoCE in one guest (fails if siw.ko was not built).
siw-smoke:
	$(VM) --siw require -- sh -c 'ibv_devinfo -d siw1 | grep -E "transport|PORT_ACTIVE" || exit 1; \
		ib_send_lat -d siw1 -R -n 200 >/tmp/srv.txt 2>&1 & s=$$!; \
		wait-listen 18515 30 && ib_send_lat -d siw1 -R -n 200 203.0.113.1 && wait $$s'

# Fuzz every parser of network bytes for a short time (FUZZTIME each: a
# count of inputs, not a duration, which can end a run with a spurious
# "context deadline exceeded"), starting from the committed corpora
# (testdata/fuzz/FuzzX); 'make unit' already replays those corpora as tests.
FUZZTIME ?= 10000x
FUZZ = bench/proto:FuzzReadFrame bench/perftest/wire:FuzzExchange bench/perftest/wire:FuzzDest bench/perftest/wire:FuzzDestBinary bench/mesh/boot:FuzzParseLine bench/mesh:FuzzLink bench/perftest:FuzzDecodeReport bench/perftest:FuzzParsePrinted bench/spec:FuzzSpecDecode bench:FuzzQPInfoDecode bench:FuzzHandshake bench:FuzzCMPrivate
fuzz:
	@for t in $(FUZZ); do p=$${t%%:*}; n=$${t#*:}; \
		echo "fuzz $$n ($$p, $(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$n$$" -fuzztime $(FUZZTIME) -parallel 2 ./$$p >/tmp/fuzz-$$n.log 2>&1 \
			|| { tail -30 /tmp/fuzz-$$n.log; exit 1; }; \
	done

test: deps check unit fuzz script-test vm-test pair-core

# The main job: a real loopback latency and bandwidth sweep on SoftRoCE.
demo: deps build
	$(VM) --bin $(BUILD)/rdmabench --outdir $(BUILD)/demo -- sh -c \
		'rdmabench devices && rdmabench loopback --op send,write,read --mode lat,bw --size 2,4K,64K --iters 2000 --json /out/demo.json'
	@echo "JSON result: $(BUILD)/demo/demo.json"

bench: deps build
	scripts/bench-vs-perftest.sh
	scripts/loss-tail.sh
	scripts/pair-bidir.sh
	scripts/pair-wire-bw.sh

# 64 KiB WRITE bandwidth across the two-guest wire, rdmabench against
# ib_write_bw in alternating rounds: the ratio of medians with its bootstrap
# interval (WIRE_ROUNDS, WIRE_ITERS: see the script's header).
bench-wire: deps build
	scripts/pair-wire-bw.sh

# The fabric comparison on this bed: SEND, WRITE, READ on rxe, siw and TCP in one
# guest, then build/fabrics/report.md and the plot.
fabrics: deps build
	scripts/fabrics.sh

clean:
	rm -rf $(BUILD)
