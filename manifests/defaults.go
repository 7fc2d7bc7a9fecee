package manifests

import (
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/tasks"
)

// defaultModel is the model of the paper for each data set (the
// catalogue's Model).
func defaultModel(dataset string) string {
	if info, ok := datasets.Lookup(dataset); ok {
		return info.Model
	}
	return ""
}

var required = []string{"version", "name", "task.dataset", "rounds", "lr", "algorithm.name"}

// fillDefaults sets every optional field that the source did not give;
// given reports whether a dotted path was present. It is idempotent.
func (m *Manifest) fillDefaults(given func(path string) bool) {
	g := givenPaths(given)
	g.int("workers", &m.Workers, 10)
	g.int("local_steps", &m.LocalSteps, 1)
	g.int("seed", &m.Seed, 1)
	cell := kinds.Cell{Workers: m.Workers, LocalSteps: m.LocalSteps, Rounds: m.Rounds}
	g.str("topology.kind", &m.Topology.Kind, "ring")
	fillBlock(&m.Topology, cell)
	g.int("evaluate.every", &m.Evaluate.Every, 1)
	g.int("checkpoint.every", &m.Checkpoint.Every, 10)
	m.fillTaskDefaults(g, cell)
	if t := m.Table; t != nil {
		g.str("table.best", &t.Best, BestFor(t.Value))
		g.int("table.digits", &t.Digits, 4)
	}
	fillBlock(&m.Algorithm, cell)
	if m.Engine == tasks.CPU {
		m.Engine = "" // the default, written out
	}
	if m.Scale != nil && *m.Scale == 1 {
		m.Scale = nil // the default, written out
	}
	if c := m.Compression; c != nil {
		if c.Codec == "none" && len(c.Params) == 0 {
			m.Compression = nil // the default, written out
		} else {
			fillBlock(c, cell)
		}
	}
	if sc := m.LRSchedule; sc != nil {
		if sc.Kind == "step" && sc.Gamma == nil {
			gamma := 0.1
			sc.Gamma = &gamma
		}
		if sc.Kind == "constant" && sc.Warmup == 0 {
			m.LRSchedule = nil // the default, written out
		}
	}
}

// givenPaths reports whether a field path was given in the file: a
// default fills only the others.
type givenPaths func(path string) bool

func (g givenPaths) int(path string, p *int, v int) {
	if !g(path) {
		*p = v
	}
}

func (g givenPaths) str(path string, p *string, v string) {
	if !g(path) {
		*p = v
	}
}

// fillTaskDefaults fills the task's defaults: the quadratic's, or a data
// set's model, batch size and partition, and the synthetic data set's.
func (m *Manifest) fillTaskDefaults(g givenPaths, cell kinds.Cell) {
	if !m.Task.Kind().Samples {
		if m.Task.Quadratic == nil {
			m.Task.Quadratic = &Quadratic{}
		}
		q := m.Task.Quadratic
		g.int("task.quadratic.dim", &q.Dim, 20)
		g.int("task.quadratic.kappa", &q.Kappa, 4)
		if !g("task.quadratic.zeta") {
			q.Zeta = 1
		}
	} else if m.Task.Dataset != "" {
		g.str("task.model", &m.Task.Model, defaultModel(m.Task.Dataset))
		g.int("batch_size", &m.BatchSize, 128)
		if m.Partition == nil {
			m.Partition = &Partition{Kind: "iid"}
		}
		fillBlock(m.Partition, cell)
	}
	if m.Task.generated() {
		if m.Task.Synthetic == nil {
			m.Task.Synthetic = &Synthetic{}
		}
		s := m.Task.Synthetic
		g.int("task.synthetic.dims", &s.Dims, 20)
		g.int("task.synthetic.classes", &s.Classes, 4)
		g.int("task.synthetic.train", &s.Train, 4000)
		g.int("task.synthetic.test", &s.Test, 1000)
		if !g("task.synthetic.separation") {
			s.Separation = 0.5
		}
	}
}
