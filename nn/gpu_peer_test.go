//go:build xla

package nn

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

var gpuPeer = flag.Bool("gpu-peer", false, "compare the GoMLX engine with PyTorch on CUDA (GPU hosts)")

// TestGPUPeerComparison prints the GoMLX engine on XLA/CUDA against a
// PyTorch loop over per-worker modules on the same GPU, for LeNet on
// MNIST-shaped data, n = 10 and 64 workers, K = 10 steps of batch 128 per
// round: samples/s (median of 5 rounds after a warm-up) and the ratio. The
// engine's round includes uploading parameters, downloading gradients
// and the SGD update on the host, as in training. It measures, it asserts
// nothing about speed.
func TestGPUPeerComparison(t *testing.T) {
	if !*gpuPeer {
		t.Skip("a benchmark for GPU hosts: go test -tags xla -run GPUPeer -gpu-peer ./nn")
	}
	config := os.Getenv("GOMLX_BACKEND")
	if config == "" {
		plugin, err := FindCUDAPlugin()
		if err != nil {
			t.Skip(err)
		}
		config = "xla:" + plugin
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 with PyTorch for the peer")
	}
	fmt.Printf("\nLeNet/MNIST shape, K=%d local steps of batch %d, SGD; samples/s, median of %d rounds after a warm-up\n",
		workload.LocalSteps, workload.Batch, workload.Rounds)
	fmt.Printf("%-8s %16s %16s %8s\n", "workers", "gomlx samples/s", "torch samples/s", "ratio")
	for _, n := range []int{10, 64} {
		cfg, _ := json.Marshal(map[string]any{"threads": procs(), "workers": n, "local_steps": workload.LocalSteps,
			"batch": workload.Batch, "rounds": workload.Rounds, "device": "cuda", "models": []string{"lenet-mnist"}})
		cmd := exec.Command(python, "peerbench/torch_peer.py", string(cfg))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		var peer struct {
			Rates []float64 `json:"samples_per_s"`
		}
		if err == nil {
			err = json.Unmarshal(out, &peer)
		}
		torch := "n/a"
		if err != nil {
			t.Logf("PyTorch peer: %v", err)
		} else {
			torch = fmt.Sprintf("%.0f", median(peer.Rates))
		}
		ours := median(gpuRates(t, config, n))
		ratio := "n/a"
		if err == nil {
			ratio = fmt.Sprintf("%.2fx", ours/median(peer.Rates))
		}
		fmt.Printf("%-8d %16.0f %16s %8s\n", n, ours, torch, ratio)
	}
}

// gpuRates times rounds of n workers on the GoMLX engine (roundRates).
func gpuRates(t *testing.T, config string, n int) []float64 {
	data := randomData([]int{1, 28, 28}, 10, 4*workload.Batch, 0, 0)
	e, err := NewGPU("lenet", data, 1, config)
	if err != nil {
		t.Fatal(err)
	}
	return roundRates(e, n, data)
}
