# ump: `make run` builds and runs the quickstart sweep; `make test` runs
# every test. See README.md.
GO ?= go
STORE ?= ./.ump

.PHONY: build run test bench

build:
	$(GO) build -o bin/ump ./cmd/ump

run: build
	./bin/ump --store $(STORE) run quickstart

test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./...
