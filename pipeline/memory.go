package pipeline

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
)

// checkMemory refuses a cell whose estimated peak (Engines.MemoryNeed)
// exceeds have, the machine's memory (machineMemory), before it allocates
// any of it.
func checkMemory(cfg *manifests.Manifest, data *datasets.Library, engines Engines, have int64) error {
	need, field, err := engines.MemoryNeed(cfg, data)
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

// checkGeneratedData refuses a cell whose data set ump generates (a
// synthetic task) where its class means and samples alone exceed have,
// the machine's memory, before any of them is generated.
func checkGeneratedData(cfg *manifests.Manifest, have int64) error {
	s := cfg.Task.Synthetic
	if s == nil || have == 0 {
		return nil
	}
	train, test, classes := float64(s.Train), float64(s.Test), float64(s.Classes)
	samples := (train + test) * float64(s.Dims+1) * 4 // float32 features and an int32 label a sample
	means := classes * float64(s.Dims) * 8            // a float64 mean a class and dimension
	if need := samples + means; need > float64(have) {
		field := "task.synthetic.train"
		switch {
		case means > samples:
			field = "task.synthetic.classes"
		case test > train:
			field = "task.synthetic.test"
		}
		return &manifests.Error{Problems: []string{fmt.Sprintf(
			"its classes and samples need about %s of memory, and this machine has %s: "+
				"field %q is too large for it (lower it, or task.synthetic.dims)",
			bytesString(need), bytesString(float64(have)), field)}}
	}
	return nil
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
		if limit, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil &&
			(total == 0 || limit < total) {
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
