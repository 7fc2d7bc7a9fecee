package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/ump-lab/ump/engines"
	"github.com/ump-lab/ump/nn/cpu"
	"github.com/ump-lab/ump/nn/gpu"
	"github.com/urfave/cli/v2"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "report which training engines work on this host, and why not",
		Description: "cpu: the float32 CPU engine, its kernel path (avx512, avx2, neon or go: the same bits\n" +
			"on each; UMP_KERNELS forces one) and what computes it (C under cgo; Go assembly on amd64\n" +
			"without cgo; Go loops).\n" +
			"gpu: the GoMLX engine (engine: gpu, or ump run --engine gpu): built with -tags xla, it opens\n" +
			"the backend of --gpu-backend or $GOMLX_BACKEND (e.g. xla:/abs/path/xla_cuda_plugin.so, or go for\n" +
			"GoMLX's pure-Go backend) or else the CUDA PJRT plugin of an installed jax-cuda package, then\n" +
			"compiles and runs a check program there (a loop of three trips and float32 products, against\n" +
			"float64 on the host and GoMLX's Go backend), with XLA's warnings on stderr. GPU cells train\n" +
			"on the device in cohorts; cells with compressed communication exchange on the host.",
		Action: func(c *cli.Context) error { return runDoctor(globalsOf(c).device, c.App.Writer) },
	}
}

func runDoctor(device *gpu.Device, w io.Writer) error {
	fmt.Fprintf(w, "cpu: works: %s, kernels %s (%s; this CPU runs %s; every path gives the same bits)\n",
		cpu.Name(), cpu.Kernels(), cpu.KernelSource(), strings.Join(cpu.Paths(), ", "))
	// XLA logs through TensorFlow's logger, which GoMLX silences unless
	// told otherwise; the doctor shows warnings (read when the plugin loads).
	os.Setenv("TF_CPP_MIN_LOG_LEVEL", "1")
	name, err := device.Name()
	if err != nil {
		fmt.Fprintf(w, "gpu: does not work here: %v\n", err)
		return nil
	}
	fmt.Fprintf(w, "gpu: works: %s\n", name)
	check, err := device.CheckCompile()
	fmt.Fprintf(w, "  backend: GOMLX_BACKEND=%s\n  %s\n", check.Backend, check.Description)
	if err != nil {
		fmt.Fprintf(w, "  compile check: FAILED\n")
		return err
	}
	fmt.Fprintf(
		w,
		"  compile check: a loop of 3 trips capturing an outer value and float32 products compiled and ran in %.1f "+
			"s;\n"+
			"  relative difference %.1g from float64 on the host, %.1g from GoMLX's Go backend (at most %.0g passes)\n",
		check.Seconds,
		check.FromHost,
		check.FromGo,
		gpu.CheckTolerance,
	)
	exact, err := device.CheckExactOrder(engines.CPUReference)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  exact order: %s\n", exact)
	memory, measured := gpu.DeviceMemory()
	source := "nvidia-smi"
	if !measured {
		source = "assumed: nvidia-smi gave none"
	}
	fmt.Fprintf(
		w,
		"  cells train on the device in cohorts sized to half of its %.0f GiB (%s; ump run --cohort N overrides);\n"+
			"  cells with compressed communication compute gradients on the device and exchange on the host\n",
		float64(memory)/(1<<30),
		source,
	)
	for _, k := range slices.Sorted(maps.Keys(gpu.Environment())) {
		fmt.Fprintf(w, "  %s=%s\n", k, os.Getenv(k))
	}
	return nil
}
