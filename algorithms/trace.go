package algorithms

import (
	"fmt"
	"slices"
)

// Trace is one round of a definition seen from the host, without vectors:
// the numbers and conditions it computes and the vectors it communicates.
type Trace struct {
	// Nums are its Nums' values and its Flags' (1 or 0), in the order the
	// definition asks for them: a definition asks for the same ones in the
	// same order in every round of every cell with the same K, so they are
	// the per-cell inputs of a program built from it (the GPU cohort's).
	Nums []float32
	// Sends are the vectors it gossips or averages, in order.
	Sends []string
	// Grads are the local steps of the gradients it asks for, in order.
	Grads []int
}

// TraceRound traces round at of the algorithm cfg names.
func TraceRound(cfg Config, at At) (Trace, error) {
	k, ok := Family.Lookup(cfg.Name)
	if !ok {
		return Trace{}, fmt.Errorf("unknown algorithm %q; use one of %v", cfg.Name, Family.Names())
	}
	t := &tracer{cfg: cfg.WithDefaults(), at: at, rules: k.New}
	k.New.Round(t, at.K)
	return t.Trace, t.err
}

// tracer is the Space of TraceRound.
type tracer struct {
	Trace
	cfg   Config
	at    At
	rules *Rules
	err   error // the definition's first use of a vector its Rules do not declare
}

func (t *tracer) declared(name string) {
	for _, v := range t.rules.Vectors {
		if v.Name == name {
			return
		}
	}
	if t.err == nil {
		t.err = fmt.Errorf("algorithms: %s uses vector %q, which its Rules do not declare", t.cfg.Name, name)
	}
}

func (t *tracer) Get(name string) Vec    { t.declared(name); return Vec{} }
func (t *tracer) Set(name string, _ Vec) { t.declared(name) }
func (t *tracer) Steps(k int, step func(tau int)) {
	for tau := range k {
		step(tau)
	}
}

func (t *tracer) Grad(tau int) Vec {
	t.Grads = append(t.Grads, tau)
	return Vec{}
}

func (t *tracer) Num(f func(Config, At) float32) Num {
	t.Nums = append(t.Nums, f(t.cfg, t.at))
	return Num{}
}

func (t *tracer) Flag(f func(Config, At) bool) Flag {
	v := float32(0)
	if f(t.cfg, t.at) {
		v = 1
	}
	t.Nums = append(t.Nums, v)
	return Flag{}
}

func (t *tracer) FirstStep(Flag) Flag { return Flag{} }

func (t *tracer) Add(Vec, Vec) Vec          { return Vec{} }
func (t *tracer) Sub(Vec, Vec) Vec          { return Vec{} }
func (t *tracer) Scale(Num, Vec) Vec        { return Vec{} }
func (t *tracer) Div(Vec, Num) Vec          { return Vec{} }
func (t *tracer) Select(Flag, Vec, Vec) Vec { return Vec{} }
func (t *tracer) Zero() Vec                 { return Vec{} }

func (t *tracer) Mix(name string, _ Vec) Vec {
	t.declared(name)
	t.Sends = append(t.Sends, name)
	return Vec{}
}

func (t *tracer) Average(name string, _, _ Vec) Vec {
	t.declared(name)
	t.Sends = append(t.Sends, name)
	return Vec{}
}

// StateNames are the vectors of an algorithm that checkpoints hold (its
// Rules' vectors but scratch ones), x first.
func StateNames(name string) ([]string, error) {
	k, ok := Family.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown algorithm %q; use one of %v", name, Family.Names())
	}
	return k.New.kept(), nil
}

// OnDevice reports what keeps the GPU cohort from running the algorithm cfg
// names with k local steps, or nil. Its round program takes one gradient
// per local step, in order, each on that step's batch.
func OnDevice(cfg Config, k int) error {
	trace, err := TraceRound(cfg, At{K: k, LR: 1})
	if err != nil {
		return err
	}
	steps := make([]int, k)
	for tau := range steps {
		steps[tau] = tau
	}
	if !slices.Equal(trace.Grads, steps) {
		return fmt.Errorf(
			"%s asks for gradients at local steps %v of a round of %d; the GPU engine takes one per local step, in "+
				"order (use engine: cpu)",
			cfg.Name,
			trace.Grads,
			k,
		)
	}
	return nil
}
