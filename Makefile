# ump: `make run` builds, fetches the default data and runs the quickstart
# sweep; `make test` runs every test. See README.md.
GO ?= go
STORE ?= ./.ump

.PHONY: build data run test bench

build:
	$(GO) build -o bin/ump ./cmd/ump

# The default data sets (into --data-dir: $UMP_DATA or ~/.cache/ump/data).
data: build
	./bin/ump data fetch mnist fashion-mnist

run: data
	./bin/ump --store $(STORE) run quickstart

test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# Go benchmarks, then the CPU engine against PyTorch (python3-torch) on the
# same round of training, with the machine's sgemm ceiling.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./...
	$(GO) test -count=1 -run '^TestPeerComparison$$' -v ./nn -peer
