package manifests

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/tasks"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// validate checks ranges and cross-field rules. at gives the source
// position of a field path for error messages.
func (m *Manifest) validate(at func(path string) string) error {
	var errs []string
	var bad complaint = func(path, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("%s: field %q: %s", at(path), path, fmt.Sprintf(format, args...)))
	}
	oneOf := func(path, v string, allowed ...string) {
		if !slices.Contains(allowed, v) {
			bad(
				path,
				"%q is not allowed%s; use one of: %s",
				v,
				kinds.DidYouMean(v, allowed),
				strings.Join(allowed, ", "),
			)
		}
	}
	if m.Version != SchemaVersion {
		bad("version", "%d is not supported; this ump reads version %d", m.Version, SchemaVersion)
	}
	switch {
	case !nameRE.MatchString(m.Name):
		bad("name", "%q is not allowed; use letters, digits, '.', '_' or '-'", m.Name)
	case len(m.Name) > maxNameLength:
		bad("name", "%d characters is too long; use at most %d "+
			"(a results directory is named NAME-HASH12, and a file name has at most 255 bytes)",
			len(m.Name), maxNameLength)
	}
	oneOf("task.dataset", m.Task.Dataset, Datasets()...)
	m.validateTask(bad, oneOf)
	cell := kinds.Cell{Workers: m.Workers, LocalSteps: m.LocalSteps, Rounds: m.Rounds}
	if m.Partition != nil {
		validateBlock(m.Partition, cell, bad, oneOf)
	}
	m.validateNumbers(bad)
	validateBlock(&m.Topology, cell, bad, oneOf)
	if m.Table != nil {
		m.Table.validate(bad, oneOf)
	}
	m.validateData(bad)
	m.validateSchedule(bad, oneOf)
	if m.Compression != nil {
		validateBlock(m.Compression, cell, bad, oneOf)
	}
	validateBlock(&m.Algorithm, cell, bad, oneOf)
	if len(errs) > 0 {
		return &Error{Problems: errs}
	}
	return nil
}

// validateNumbers checks the ranges of the manifest's counts and numbers:
// workers, rounds, scale, local steps, lr, seed, weight decay, and how
// often it evaluates and checkpoints.
func (m *Manifest) validateNumbers(bad complaint) {
	if m.Workers < 1 || m.Workers > 1024 {
		bad("workers", "%d is out of range; use an integer from 1 to 1024", m.Workers)
	}
	if m.Rounds < 1 {
		bad("rounds", "%d is out of range; use a positive integer", m.Rounds)
	}
	if m.Scale != nil && !(*m.Scale > 0 && *m.Scale <= 1) {
		bad("scale", "%g is out of range; use a number in (0, 1] (to run longer, raise rounds)", *m.Scale)
	}
	if m.LocalSteps < 1 {
		bad("local_steps", "%d is out of range; use a positive integer", m.LocalSteps)
	}
	if !(m.LR > 0) {
		bad("lr", "%g is out of range; use a positive number", m.LR)
	}
	if m.Seed < 0 {
		bad("seed", "%d is out of range; use a non-negative integer", m.Seed)
	}
	if !(m.WeightDecay >= 0) {
		bad("weight_decay", "%g is out of range; use a number >= 0", m.WeightDecay)
	}
	if m.Evaluate.Every < 1 {
		bad("evaluate.every", "%d is out of range; use a positive integer", m.Evaluate.Every)
	}
	if m.Checkpoint.Every < 1 {
		bad("checkpoint.every", "%d is out of range; use a positive integer", m.Checkpoint.Every)
	}
}

// validate checks the table block: its paths, value, digits and how an
// entry's lr is chosen.
func (t *Table) validate(bad complaint, oneOf func(path, v string, allowed ...string)) {
	if len(t.Rows) == 0 {
		bad("table.rows", "list at least one manifest path, e.g. [algorithm]")
	}
	seen := map[string]string{} // path -> the field that labels with it first
	for i, p := range slices.Concat(t.Rows, t.Columns, []string{t.Select}) {
		field := "table.rows"
		if i >= len(t.Rows) {
			field = "table.columns"
		}
		if i == len(t.Rows)+len(t.Columns) {
			field = "table.select"
			if p == "" {
				continue
			}
		}
		if helpFor(p) == "" || p == "table" || strings.HasPrefix(p, "table.") || p == "name" || p == "version" {
			bad(
				field,
				"%q is not a manifest path of a cell; use a dotted path such as algorithm, lr or partition.alpha",
				p,
			)
		}
		if first, ok := seen[p]; ok &&
			field != "table.select" { // a select path that labels too: report.CheckTable says so
			bad(
				field,
				"%q is in %s already: a path labels the rows or the columns, not both (an entry would match no cell)",
				p,
				first,
			)
		}
		seen[p] = field
	}
	if t.Value == "" {
		bad("table.value", "name a column of the final table, e.g. test_acc_mean or objective_gap")
	}
	if slices.Contains(t.Also, t.Value) {
		bad("table.also", "%q is already table.value; list other columns", t.Value)
	}
	oneOf("table.best", t.Best, "max", "min")
	if t.Digits < 0 || t.Digits > 12 {
		bad("table.digits", "%d is out of range; use an integer from 0 to 12", t.Digits)
	}
	t.validateSelect(bad)
}

// validateSelect checks how the table chooses a swept value (select).
func (t *Table) validateSelect(bad complaint) {
	if t.SelectSeeds != nil && t.Select == "" {
		bad("table.select.by", "name the swept path tuned on the seeds, e.g. lr")
	}
	if t.SelectSeeds != nil && len(t.SelectSeeds) == 0 {
		bad("table.select.seeds", "list the seeds to tune on, e.g. [1, 2]")
	}
	if t.SelectPer != nil && t.Select == "" {
		bad("table.select.by", "name the swept path tuned per row or entry, e.g. lr")
	}
	if t.SelectPer != nil && len(t.SelectPer) == 0 {
		bad("table.select.per", "list the scopes to tune in, e.g. [row, entry]")
	}
	for i, per := range t.SelectPer {
		switch {
		case !slices.Contains(SelectScopes, per):
			bad(
				"table.select.per",
				"%q is not a scope; use entry (each entry its own choice) or row (one choice per row, by the mean "+
					"over its columns)",
				per,
			)
		case slices.Index(t.SelectPer, per) < i:
			bad("table.select.per", "%q is listed twice; list each scope once", per)
		}
	}
}

// validateData checks what the workers' shares of the training split
// allow: the partition's min_size and the validation fraction.
func (m *Manifest) validateData(bad complaint) {
	if n := m.trainSamples(); n > 0 && m.Partition != nil && m.Workers >= 1 {
		if least := m.Partition.Params.Int("min_size"); least*m.Workers > n {
			bad(
				"partition.min_size",
				"%d for each of %d workers is more than the training split's %d samples; use at most %d (or fewer "+
					"workers)",
				least,
				m.Workers,
				n,
				n/m.Workers,
			)
		}
	}
	v := m.Validation
	if v == nil {
		return
	}
	switch {
	case !(v.Fraction > 0 && v.Fraction <= 0.5):
		bad("validation.fraction", "%g is out of range; use a number in (0, 0.5], e.g. 0.1", v.Fraction)
	case !m.Task.Kind().Samples:
		bad("validation", "the %s task has no samples to hold out; remove validation", m.Task.Kind().Name)
	case m.OnGPU():
		bad("validation", "the GPU engine does not score a validation split; use engine: cpu (or remove validation)")
	default:
		if largest := m.largestWorker(); largest > 0 && math.Round(v.Fraction*float64(largest)) == 0 {
			bad(
				"validation.fraction",
				"%g holds out no sample: a worker of the %d holds at most %d of the training split's samples, and %g "+
					"of them rounds to none; "+
					"use a fraction of at least %.2g (or fewer workers)",
				v.Fraction,
				m.Workers,
				largest,
				v.Fraction,
				0.5/float64(largest),
			)
		}
	}
}

// onlyTakes reports parameters given to a kind that does not take them.
func onlyTakes(bad complaint, path, kind string, takes []string, given map[string]bool) {
	for _, p := range slices.Sorted(maps.Keys(given)) {
		if given[p] && !slices.Contains(takes, p) {
			list := strings.Join(takes, ", ")
			if list == "" {
				list = "none"
			}
			bad(path+"."+p, "%s does not take %s; its parameters are: %s", kind, p, list)
		}
	}
}

type complaint func(path, format string, args ...any)

// validateTask checks the data set's own block and the model.
func (m *Manifest) validateTask(bad complaint, oneOf func(path, v string, allowed ...string)) {
	t, kind := m.Task, m.Task.Kind()
	if !kind.Samples {
		if t.Model != "" {
			bad("task.model", "the %s task has no model; remove it", kind.Name)
		}
		if m.Partition != nil {
			bad("partition", "the %s task gives worker i its own objective f_i; remove partition", kind.Name)
		}
		if m.BatchSize != 0 {
			bad(
				"batch_size",
				"the %s task has no samples to batch; remove batch_size (task.%[1]s.sigma sets the gradient noise)",
				kind.Name,
			)
		}
	} else if t.Model != "" {
		oneOf("task.model", t.Model, ModelNames()...)
		i := slices.IndexFunc(Models, func(md Model) bool { return md.Name == t.Model })
		if shape, known := t.inputShape(); known && i >= 0 && !Models[i].Reads(shape) {
			bad("task.model", "%s reads %s; %s gives %s (use %s)", t.Model, Models[i].Doc, t.Dataset, InputWords(shape),
				strings.Join(ModelsReading(shape), ", "))
		}
	}
	if m.Engine != "" {
		oneOf("engine", m.Engine, tasks.Engines...)
		if len(kind.Engines) == 1 {
			bad("engine", "the %s task runs on the %s; remove engine", kind.Name, strings.ToUpper(kind.Engines[0]))
		}
	}
	if kind.Samples && t.Dataset != "" && m.BatchSize < 1 {
		bad("batch_size", "%d is out of range; use a positive integer", m.BatchSize)
	}
	if q := t.Quadratic; q != nil {
		if kind.Samples {
			bad("task.quadratic", "only allowed with dataset: %s", tasks.Quadratic.Name)
		}
		if q.Dim < 1 {
			bad("task.quadratic.dim", "%d is out of range; use a positive integer", q.Dim)
		}
		if q.Kappa < 1 {
			bad("task.quadratic.kappa", "%d is out of range; use a positive integer", q.Kappa)
		}
		if q.Zeta < 0 {
			bad("task.quadratic.zeta", "%g is out of range; use a number >= 0", q.Zeta)
		}
		if q.Sigma < 0 {
			bad("task.quadratic.sigma", "%g is out of range; use a number >= 0", q.Sigma)
		}
	}
	if s := t.Synthetic; s != nil {
		if !t.generated() {
			bad("task.synthetic", "only allowed with a generated data set (dataset: synthetic)")
		}
		for _, f := range []struct {
			name string
			v    int
			min  int
		}{{"dims", s.Dims, 1}, {"classes", s.Classes, 2}, {"train", s.Train, 1}, {"test", s.Test, 1}} {
			if f.v < f.min {
				bad("task.synthetic."+f.name, "%d is out of range; use an integer >= %d", f.v, f.min)
			}
		}
		if !(s.Separation > 0) {
			bad("task.synthetic.separation", "%g is out of range; use a number > 0", s.Separation)
		}
	}
}

// validateSchedule checks the learning-rate schedule against the rounds
// cells run.
func (m *Manifest) validateSchedule(bad complaint, oneOf func(path, v string, allowed ...string)) {
	sc := m.LRSchedule
	if sc == nil {
		return
	}
	takes, known := scheduleParams[sc.Kind]
	if !known {
		oneOf("lr_schedule.kind", sc.Kind, slices.Sorted(maps.Keys(scheduleParams))...)
		return
	}
	onlyTakes(
		bad,
		"lr_schedule",
		sc.Kind,
		takes,
		map[string]bool{"warmup": sc.Warmup != 0, "milestones": sc.Milestones != nil, "gamma": sc.Gamma != nil},
	)
	rounds, note := m.ScaledRounds(), ""
	if m.Scale != nil {
		note = fmt.Sprintf(" at scale %g", *m.Scale)
	}
	if sc.Warmup < 0 || sc.Warmup >= max(1, rounds) {
		bad(
			"lr_schedule.warmup",
			"%d is out of range; use an integer from 0 to rounds-1 (%d%s)",
			sc.Warmup,
			rounds-1,
			note,
		)
	}
	if sc.Kind == "step" {
		if len(sc.Milestones) == 0 {
			bad(
				"lr_schedule.milestones",
				"step needs milestones, the rounds from which the rate is multiplied by gamma, e.g. [50, 75]",
			)
		}
		for i, r := range sc.Milestones {
			if r < 1 || r >= rounds || (i > 0 && r <= sc.Milestones[i-1]) {
				bad(
					"lr_schedule.milestones",
					"%v is not allowed; use increasing round numbers from 1 to rounds-1 (%d%s)",
					sc.Milestones,
					rounds-1,
					note,
				)
				break
			}
		}
		if g := *sc.Gamma; !(g > 0 && g <= 1) {
			bad("lr_schedule.gamma", "%g is out of range; use a number in (0, 1]", g)
		}
	}
}

// Error lists every problem found in a manifest, one per line.
type Error struct{ Problems []string }

func (e *Error) Error() string { return strings.Join(e.Problems, "\n") }
