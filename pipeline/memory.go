package pipeline

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/stages"
)

// stateVectors is about how many model-sized float32 vectors a worker
// keeps (parameters, gradient, momentum, the algorithms' buffers, a
// codec's memory, the exchange's copies). The estimate only has to tell
// the impossible from the possible.
const stateVectors = 8

// memoryNeed estimates the bytes a cell needs at its peak: every worker's
// state vectors, and one batch's activations forward and backward. It
// names the manifest field that drives the estimate.
func memoryNeed(cfg *manifests.Manifest, data *datasets.Library) (need float64, field string, err error) {
	workers := float64(cfg.Workers)
	if cfg.Task.Dataset == "quadratic" {
		return workers * float64(cfg.Task.Quadratic.Dim) * stateVectors * 4, "task.quadratic.dim", nil
	}
	d, err := stages.LoadData(cfg.Task, data)
	if err != nil {
		return 0, "", err
	}
	m, err := nn.NewModel(cfg.Task.Model, nn.Input{Shape: d.Shape, Classes: d.Classes, Vocab: len(d.Vocab)})
	if err != nil {
		return 0, "", err
	}
	state := workers * float64(m.Params) * stateVectors * 4
	batch := float64(cfg.BatchSize) * float64(m.Activations()) * 4 * 2
	if batch > state {
		return state + batch, "batch_size", nil
	}
	return state + batch, "workers", nil
}

// checkMemory refuses a cell whose estimated peak (memoryNeed) exceeds
// have, the machine's memory (machineMemory), before it allocates any of
// it.
func checkMemory(cfg *manifests.Manifest, data *datasets.Library, have int64) error {
	need, field, err := memoryNeed(cfg, data)
	if err != nil {
		return err
	}
	if have == 0 || need <= float64(have) {
		return nil
	}
	return &manifests.Error{Problems: []string{fmt.Sprintf("needs about %s of memory, and this machine has %s: "+
		"field %q is too large for it (lower it, or run the manifest on a larger machine)",
		bytesString(need), bytesString(float64(have)), field)}}
}

// machineMemory is the memory this process may use: the machine's, or a
// cgroup's limit below it; 0 when unknown.
func machineMemory() int64 {
	var total int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				total = kb << 10
			}
		}
		f.Close()
	}
	if data, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if limit, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && (total == 0 || limit < total) {
			total = limit
		}
	}
	return total
}

// bytesString renders a byte count in binary units.
func bytesString(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for ; b >= 1024 && i < len(units)-1; i++ {
		b /= 1024
	}
	return fmt.Sprintf("%.3g %s", b, units[i])
}
