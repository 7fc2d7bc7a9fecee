//go:build !xla

package nn

import (
	"errors"

	"github.com/ump-lab/ump/datasets"
)

// errNoGPU is the answer of a build without the GoMLX engine.
var errNoGPU = errors.New("this ump was built without the GPU engine; rebuild with -tags xla (make build-gpu)")

// Device stands for a GPU backend, which this build cannot open.
type Device struct{}

// NewDevice returns a device that reports the GPU engine is not built in.
func NewDevice(string) *Device { return &Device{} }

// Name reports that the GPU engine is not built in.
func (*Device) Name() (string, error) { return "", errNoGPU }

// GPUEnvironment is empty: there is no GPU engine.
func GPUEnvironment() map[string]string { return nil }

// NewGPU reports that the GPU engine is not built in.
func NewGPU(string, *datasets.Dataset, uint64, *Device) (Engine, error) { return nil, errNoGPU }

// NewCohort reports that the GPU engine is not built in.
func NewCohort(*Device, *datasets.Dataset, CohortShape) (Cohort, error) { return nil, errNoGPU }

// DeviceMemory is 0: there is no GPU engine.
func DeviceMemory() (bytes int64, measured bool) { return 0, false }
