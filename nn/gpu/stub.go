//go:build !xla

package gpu

import (
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/nn"
)

// Device stands for a GPU backend, which this build cannot open.
type Device struct{}

// NewDevice returns a device that reports the GPU engine is not built in.
func NewDevice(string) *Device { return &Device{} }

// Name reports that the GPU engine is not built in.
func (*Device) Name() (string, error) { return "", ErrNoGPU }

// CheckCompile reports that the GPU engine is not built in.
func (*Device) CheckCompile() (CompileCheck, error) { return CompileCheck{}, ErrNoGPU }

// CheckExactOrder reports that the GPU engine is not built in.
func (*Device) CheckExactOrder(Reference) (ExactCheck, error) { return ExactCheck{}, ErrNoGPU }

// Environment is empty: there is no GPU engine.
func Environment() map[string]string { return nil }

// New reports that the GPU engine is not built in.
func New(string, *datasets.Dataset, uint64, *Device) (nn.Engine, error) { return nil, ErrNoGPU }

// NewCohort reports that the GPU engine is not built in.
func NewCohort(*Device, *datasets.Dataset, nn.CohortShape) (nn.Cohort, error) { return nil, ErrNoGPU }

// DeviceMemory is 0: there is no GPU engine.
func DeviceMemory() (bytes int64, measured bool) { return 0, false }
