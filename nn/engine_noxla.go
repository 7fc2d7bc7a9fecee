//go:build !xla

package nn

import (
	"errors"

	"github.com/ump-lab/ump/datasets"
)

// errNoGPU is the answer of a build without the GoMLX engine.
var errNoGPU = errors.New("this ump was built without the GPU engine; rebuild with -tags xla (make build-gpu)")

// GPUName reports that the GPU engine is not built in.
func GPUName() (string, error) { return "", errNoGPU }

// NewGPU reports that the GPU engine is not built in.
func NewGPU(string, *datasets.Dataset, uint64, string) (Engine, error) { return nil, errNoGPU }

// NewCohort reports that the GPU engine is not built in.
func NewCohort(string, *datasets.Dataset, CohortShape) (Cohort, error) { return nil, errNoGPU }

// DeviceMemory is 0: there is no GPU engine.
func DeviceMemory() (bytes int64, measured bool) { return 0, false }
