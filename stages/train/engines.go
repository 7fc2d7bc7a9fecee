package train

import (
	"fmt"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/nn"
)

// Engines are the engines the stage may train with, which the composition
// root hands it (package engines builds the CPU and GPU engines). It asks
// them by a cell's engine kind, its manifest's engine field: "" for the
// CPU engine, "gpu".
type Engines interface {
	// Host is the factory of the engine of that kind that computes a
	// data-set cell's gradients and scores for the training loop on the
	// host, or an error where there is none.
	Host(kind string) (NewEngine, error)
	// Cohort is the factory of the program that trains cells of that kind
	// and of one shape together on a device (CohortKey), or nil where the
	// kind has none. The CPU engine's kind has one where its cells train
	// on a device in the exact program (nn.CohortShape's Exact), with the
	// CPU engine's bits.
	Cohort(kind string) NewCohort
}

// NewEngine builds an engine for model on data, its initial parameters
// and dropout streams from seed, on procs goroutines (0: all cores; an
// engine on a device may ignore it).
type NewEngine func(model string, data *datasets.Dataset, seed uint64, procs int) (nn.Engine, error)

// NewCohort builds a device program for the cells of shape on data.
type NewCohort func(data *datasets.Dataset, shape nn.CohortShape) (nn.Cohort, error)

// cohortOf is the Cohort factory of a cell's kind, or an error naming what
// the stage was not handed.
func cohortOf(e Engines, p *Params) (NewCohort, error) {
	if f := e.Cohort(p.Engine); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("train: no cohort program of engine kind %q was handed to the stage", p.Engine)
}
