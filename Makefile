# ump: `make run` builds, fetches MNIST and runs the quickstart sweep;
# `make test` runs every test. See README.md and docs/internals.md.
GO ?= go
STORE ?= ./.ump
# Recipes run in bash with pipefail: make test pipes go test into its summary.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
# make test's list of skipped tests (internal/testsummary).
SKIPS := bin/skipped-tests.txt
SUMMARY := bin/testsummary -skips $(SKIPS)

.PHONY: build build-gpu gpu-kit data run reproduce test mutants bench bench-gpu

build:
	@test -x bin/ump || echo "make: building bin/ump; a first build downloads Go modules and compiles for minutes"
	$(GO) build -buildvcs=auto -o bin/ump ./cmd/ump

# ump with the GPU engine (GoMLX on XLA/PJRT; see docs/gpu.md, `ump doctor`).
build-gpu:
	$(GO) build -buildvcs=auto -tags xla -o bin/ump-gpu ./cmd/ump

# Everything a GPU host without Go or network needs, in .gpu/ (at most
# 64 MiB): take it along and run .gpu/run all (or one of its phases:
# smoke|agree|bench|tables) there (docs/gpu.md).
gpu-kit:
	gpukit/build.sh

# The default data sets (into --data-dir: $UMP_DATA or ~/.cache/ump/data).
data: build
	./bin/ump data fetch mnist fashion-mnist

# The quickstart (Table 1's MNIST row at non-IID 0.1): build, fetch MNIST,
# run, print the table.
run: build
	./bin/ump data fetch mnist
	./bin/ump --store $(STORE) run quickstart

# Every results directory under results/ computed again in $(STORE), as
# many cells at once as the machine has cores, then each cell compared
# with the committed one bit for bit; rerun to resume (README.md).
JOBS ?= $(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 1)
reproduce: data
	./bin/ump --store $(STORE) reproduce -j $(JOBS) results

# gofmt, go vet (also with the xla and peer tags), then every test, the
# longest packages first (FIRST) so the 2-core machine stays busy. Beside
# them: the GPU kit's phases on GoMLX's Go backend (bin/gpu-kit.log) and
# 30 s + 15 s of fuzzing with one worker (bin/fuzz*.log). It ends with
# each package's time and every skipped test with its reason;
# FORBID_SKIPS=TEXT fails it when a reason holds TEXT. What each part
# checks and why: docs/internals.md, "Testing and CI".
FIRST := ./cmd/ump ./nn/cpu ./pipeline ./algorithms
test:
	@unformatted=$$($$($(GO) env GOROOT)/bin/gofmt -l $$(git ls-files '*.go')); \
		if [ -n "$$unformatted" ]; then echo "$$unformatted"; echo "make test: gofmt -w the files above"; exit 1; fi
	$(GO) build -o bin/testsummary ./internal/testsummary
	rm -f $(SKIPS) bin/gpu-kit.log bin/fuzz*.log
	$(GO) clean -fuzzcache
	{ $(GO) test -run '^$$' -fuzz '^FuzzReadExported$$' -fuzztime 30s -fuzzminimizetime 10x -parallel 1 ./report/resultsdir > bin/fuzz.log 2>&1 && \
		$(GO) test -run '^$$' -fuzz '^FuzzReadParquet$$' -fuzztime 15s -fuzzminimizetime 10x -parallel 1 ./artifacts > bin/fuzz-parquet.log 2>&1; } & fuzz=$$!; \
		$(GO) vet ./... && $(GO) vet -tags xla ./... && $(GO) vet -tags 'xla peer' ./nn/... || { wait $$fuzz; exit 1; }; \
		{ $(MAKE) -s gpu-kit && UMP_GPU_KIT=$(CURDIR)/.gpu $(GO) test -count=1 -timeout 30m -json -run KitPhases ./gpukit | $(SUMMARY) -v; } > bin/gpu-kit.log 2>&1 & beside=$$!; \
		$(GO) test -count=1 -timeout 30m -json $$($(GO) list $(FIRST) ./... | grep -v '/gpukit$$') | $(SUMMARY); rc=$$?; \
		$(GO) test -count=1 -tags xla -json -run '^TestXLABuilderAcceptsEveryProgram$$' ./nn/gpu | $(SUMMARY) || rc=1; \
		$(GO) test -count=1 -tags xla -json ./nn/gpu/exact | $(SUMMARY) || rc=1; \
		wait $$beside || rc=1; echo "--- the GPU kit (make gpu-kit, then its phases on the Go backend):"; cat bin/gpu-kit.log; \
		wait $$fuzz || rc=1; echo "--- fuzzing:"; grep -hv '^fuzz: elapsed' bin/fuzz.log bin/fuzz-parquet.log; \
		echo $$rc > bin/test-rc
	for log in bin/fuzz.log bin/fuzz-parquet.log; do awk '/now fuzzing/ {match($$0, /elapsed: [0-9]+s/); b = substr($$0, RSTART+9, RLENGTH-10); \
		split($$0, p, "/"); n = p[2] + 0} /execs: [0-9]+/ {match($$0, /elapsed: [0-9]+s/); e = substr($$0, RSTART+9, RLENGTH-10); \
		match($$0, /execs: [0-9]+/); x = substr($$0, RSTART+7, RLENGTH-7)} END {printf "fuzzing (%s): %d executions in %d s (after %d s replaying its %d seed inputs), %.0f per second\n", \
		FILENAME, x, e-b, b, n, (e > b ? x/(e-b) : 0)}' $$log; done
	@rc=$$(cat bin/test-rc); rm -f bin/test-rc; $(SUMMARY) -list $(if $(FORBID_SKIPS),-forbid '$(FORBID_SKIPS)') || rc=1; \
		if [ "$$rc" != 0 ]; then echo "make test: FAILED (the failures are above the package times)"; fi; exit $$rc

# Mutants of the code, each against the tests that must fail on it
# (.ci/mutants lists them; two at a time).
mutants:
	.ci/mutants

# Go benchmarks, then the CPU engine against PyTorch (python3-torch) on the
# same round of training, with the engine's own matrix product's ceiling.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./...
	$(GO) test -tags peer -run '^$$' -bench '^BenchmarkPeerComparison$$' -benchtime 1x ./nn/cpu

# On a GPU host: the GPU engine's cohorts against a JAX and a torch.func
# peer and the per-worker PyTorch loop on the same GPU (python3 with jax
# and torch on the PATH; -gpu-cases/-gpu-peers narrow it), then the wall
# time of the full paper/table1-mnist in a fresh store.
bench-gpu: build-gpu
	$(GO) test -tags 'xla peer' -run '^$$' -bench '^BenchmarkGPUPeerComparison$$' -benchtime 1x ./nn/gpu
	./bin/ump-gpu data fetch mnist
	store=$$(mktemp -d) && start=$$(date +%s) && \
		./bin/ump-gpu --store $$store run --engine gpu paper/table1-mnist && \
		echo "paper/table1-mnist on the GPU engine: $$(( $$(date +%s) - start )) s"; \
		rc=$$?; rm -rf $$store; exit $$rc
