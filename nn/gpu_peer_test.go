//go:build xla && peer

package nn

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/internal/rng"
	"github.com/ump-lab/ump/kinds"
)

var (
	gpuCases = flag.String("gpu-cases", "", "comma-separated benchmark cases (default: all)")
	gpuPeers = flag.String("gpu-peers", "jax,torch,torch-loop", "comma-separated peers to time beside the engine")
)

// benchCase is one benchmark shape: a model on generated data of a data
// set's shape, a cohort of cells × workers, K = 10 steps of batch b.
type benchCase struct {
	name, model  string
	cells, n, b  int
	data         func() *datasets.Dataset
	peerModel    string // the peers' name for the model
	perWorkerRef bool   // also time today's per-worker PyTorch loop
}

const (
	benchK      = 10
	benchRounds = 20 // timed rounds, after 2 warm-ups
)

func benchCases() []benchCase {
	mnist := func() *datasets.Dataset { return randomData([]int{1, 28, 28}, 10, 60000, 0, 0) }
	emnist := func() *datasets.Dataset { return randomData([]int{1, 28, 28}, 62, 60000, 0, 0) }
	agnews := func() *datasets.Dataset { return randomData(nil, 4, 120000, 95812, 40) }
	var out []benchCase
	for _, c := range [][2]int{{1, 10}, {36, 10}, {1, 64}, {180, 10}, {36, 64}, {180, 64}} {
		out = append(out, benchCase{fmt.Sprintf("lenet-c%d-n%d", c[0], c[1]), "lenet", c[0], c[1], 128, mnist, "lenet-mnist", c[0] == 1})
	}
	return append(out,
		benchCase{"cnn-c4-n10", "cnn", 4, 10, 128, emnist, "cnn-emnist", false},
		benchCase{"embedding-bag-c2-n10", "embedding-bag", 2, 10, 128, agnews, "embedding-bag-agnews", false})
}

// BenchmarkGPUPeerComparison prints, for each benchmark case, the GPU engine's
// D-SUM rounds (K = 10 steps, gossip on a ring, everything on the device
// but the batches' indices and dropout masks) against a JAX peer
// (jit + vmap + lax.scan, donated state) and a PyTorch torch.func peer
// (vmap + functional_call, torch.compile) doing the same work on the same
// GPU, and today's per-worker PyTorch loop: samples/s (median of 20
// rounds after 2 warm-ups), compile time and peak device memory. TF32 is
// off on every side. make bench-gpu runs it once (-benchtime 1x).
func BenchmarkGPUPeerComparison(b *testing.B) {
	for b.Loop() {
		compareGPUPeers(b)
	}
}

func compareGPUPeers(t testing.TB) {
	config := os.Getenv("GOMLX_BACKEND")
	if config == "" {
		plugin, err := FindCUDAPlugin()
		if err != nil {
			t.Skip(err)
		}
		config = "xla:" + plugin
	}
	python, _ := exec.LookPath("python3")
	fmt.Printf("\nD-SUM rounds: K=%d local steps, gossip on a ring; samples/s median of %d rounds after 2 warm-ups\n", benchK, benchRounds)
	fmt.Printf("%-22s %-14s %14s %9s %10s %12s\n", "case", "engine", "samples/s", "vs ump", "compile s", "peak GiB")
	for _, bc := range benchCases() {
		if *gpuCases != "" && !strings.Contains(","+*gpuCases+",", ","+bc.name+",") {
			continue
		}
		ours, compile, est, err := cohortRates(device(config), bc)
		if err != nil {
			fmt.Printf("%-22s %-14s %s (estimate %.1f GiB; the whole error is on stderr)\n", bc.name, "ump", firstLine(err), float64(est)/(1<<30))
			fmt.Fprintf(os.Stderr, "%s: %v\n", bc.name, err)
			continue
		}
		fmt.Printf("%-22s %-14s %14.0f %9s %10.1f %12s\n", bc.name, "ump", median(ours), "1.00x", compile, fmt.Sprintf("~%.1f est", float64(est)/(1<<30)))
		if python == "" {
			continue
		}
		for _, peer := range strings.Split(*gpuPeers, ",") {
			switch {
			case peer == "jax" || peer == "torch":
				peerRow(python, peer+"_cohort.py", bc, median(ours))
			case peer == "torch-loop" && bc.perWorkerRef:
				perWorkerRow(python, bc, median(ours))
			}
		}
	}
}

// peerRow runs a cohort peer script on a case and prints its row.
func peerRow(python, script string, bc benchCase, ours float64) {
	cfg, _ := json.Marshal(map[string]any{"model": bc.peerModel, "cells": bc.cells, "workers": bc.n, "local_steps": benchK,
		"batch": bc.b, "rounds": benchRounds})
	cmd := exec.Command(python, "peerbench/"+script, string(cfg))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var peer struct {
		Rates   []float64 `json:"samples_per_s"`
		Compile float64   `json:"compile_s"`
		Peak    float64   `json:"peak_bytes"`
		Error   string    `json:"error"`
	}
	if err == nil {
		err = json.Unmarshal(out, &peer)
	}
	name := strings.TrimSuffix(script, "_cohort.py")
	switch {
	case err != nil:
		fmt.Printf("%-22s %-14s %v\n", bc.name, name, err)
	case peer.Error != "":
		fmt.Printf("%-22s %-14s %s\n", bc.name, name, peer.Error)
	default:
		r := median(peer.Rates)
		fmt.Printf("%-22s %-14s %14.0f %8.2fx %10.1f %12.2f\n", bc.name, name, r, r/ours, peer.Compile, peer.Peak/(1<<30))
	}
}

// perWorkerRow times today's per-worker PyTorch loop (one module and
// optimizer per worker, SGD) on the case's workers.
func perWorkerRow(python string, bc benchCase, ours float64) {
	cfg, _ := json.Marshal(map[string]any{"threads": procs(), "workers": bc.n, "local_steps": benchK,
		"batch": bc.b, "rounds": 5, "device": "cuda", "models": []string{bc.peerModel}})
	cmd := exec.Command(python, "peerbench/torch_peer.py", string(cfg))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var peer struct {
		Rates []float64 `json:"samples_per_s"`
	}
	if err == nil {
		err = json.Unmarshal(out, &peer)
	}
	if err != nil {
		fmt.Printf("%-22s %-14s %v\n", bc.name, "torch-loop", err)
		return
	}
	r := median(peer.Rates)
	fmt.Printf("%-22s %-14s %14.0f %8.2fx %10s %12s\n", bc.name, "torch-loop", r, r/ours, "-", "-")
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// cohortRates times D-SUM rounds of a case's cohort: samples/s of each
// timed round, the first round's time (compilation included), and the
// cohort's estimated device memory (CellBytes).
func cohortRates(dev *Device, bc benchCase) (rates []float64, compile float64, est int64, err error) {
	data := bc.data()
	m, err := NewModel(bc.model, Input{Shape: data.Shape, Classes: data.Classes, Vocab: len(data.Vocab)})
	if err != nil {
		return nil, 0, 0, err
	}
	est = int64(bc.cells) * CellBytes(m, "d-sum", bc.n, bc.b)
	dsum := algorithms.Config{Name: "d-sum", Params: kinds.Values{"alpha": 2.0, "beta": 0.9}}
	seeds := make([]uint64, bc.cells)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	co, err := NewCohort(dev, data, CohortShape{Model: bc.model, Algorithm: "d-sum", Cells: bc.cells, Workers: bc.n,
		LocalSteps: benchK, Batch: bc.b})
	if err != nil {
		return nil, 0, est, err
	}
	defer co.Close()
	x0 := make([]float32, m.Params)
	for c, seed := range seeds {
		m.Init(x0, seed)
		opt, err := algorithms.New(dsum, bc.n, x0)
		if err != nil {
			return nil, 0, est, err
		}
		if err := co.SetState(c, opt.State()); err != nil {
			return nil, 0, est, err
		}
	}
	mix := ringOf(bc.n)
	r := rng.New(1, "bench-batches")
	for round := 0; round < benchRounds+2; round++ {
		cells := make([]CellRound, bc.cells)
		for c := range cells {
			batches := make([][][]int, bc.n)
			for i := range batches {
				for range benchK {
					batches[i] = append(batches[i], r.Perm(data.Train.Len())[:bc.b])
				}
			}
			cells[c] = CellRound{Active: true, Config: dsum, Seed: seeds[c],
				Round: round, LR: 0.01, Mix: mix, Batches: batches}
		}
		start := time.Now()
		if _, _, err := co.Round(cells); err != nil {
			return nil, 0, est, err
		}
		took := time.Since(start).Seconds()
		switch {
		case round == 0:
			compile = took
		case round >= 2:
			rates = append(rates, float64(bc.cells*bc.n*benchK*bc.b)/took)
		}
	}
	return rates, compile, est, nil
}
