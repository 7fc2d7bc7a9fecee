package train

import (
	"fmt"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/nn"
)

// Engines are the engines the stage may train with, which the composition
// root hands it (package engines builds the CPU and GPU engines), by
// engine kind: a manifest's engine field ("" for the CPU engine, "gpu").
type Engines struct {
	// Host builds the engine that computes a data-set cell's gradients and
	// scores for the training loop on the host.
	Host map[string]NewEngine
	// Cohort builds the program that trains cells of one shape together
	// on a device (CohortKey), for the kinds that have one. The CPU
	// engine's kind ("") has one where its cells train on a device in the
	// exact program (nn.CohortShape's Exact), with the CPU engine's bits.
	Cohort map[string]NewCohort
}

// NewEngine builds an engine for model on data, its initial parameters
// and dropout streams from seed, on procs goroutines (0: all cores; an
// engine on a device may ignore it).
type NewEngine func(model string, data *datasets.Dataset, seed uint64, procs int) (nn.Engine, error)

// NewCohort builds a device program for the cells of shape on data.
type NewCohort func(data *datasets.Dataset, shape nn.CohortShape) (nn.Cohort, error)

// host is the Host engine of a cell's kind.
func (e Engines) host(p *Params) (NewEngine, error) { return ofKind(e.Host, p.Engine, "engine") }

// cohort is the Cohort builder of a cell's kind.
func (e Engines) cohort(p *Params) (NewCohort, error) {
	return ofKind(e.Cohort, p.Engine, "cohort program")
}

// ofKind is the factory of engine kind kind ("" for the CPU engine), or
// an error naming what the stage was not handed.
func ofKind[F any](factories map[string]F, kind, what string) (F, error) {
	if f, ok := factories[kind]; ok {
		return f, nil
	}
	name := "CPU"
	if kind != "" {
		name = fmt.Sprintf("%q", kind)
	}
	var none F
	return none, fmt.Errorf("train: no %s %s was handed to the stage", name, what)
}
