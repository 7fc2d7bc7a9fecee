package manifests

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// SchemaVersion is the manifest schema this package reads; it enters the hash.
const SchemaVersion = 1

// Manifest is one experiment configuration. Field tags: yaml is the key in the
// file, help says what is allowed (quoted in error messages).
type Manifest struct {
	Version    int        `yaml:"version" json:"version" help:"the schema version, 1"`
	Name       string     `yaml:"name" json:"name" help:"a name of letters, digits, '.', '_' or '-'"`
	Task       Task       `yaml:"task" json:"task" help:"a mapping: {dataset: quadratic, quadratic: {...}}"`
	Workers    int        `yaml:"workers" json:"workers" help:"the number of workers, an integer from 1 to 1024"`
	Rounds     int        `yaml:"rounds" json:"rounds" help:"the number of communication rounds, a positive integer"`
	LocalSteps int        `yaml:"local_steps" json:"local_steps" help:"local steps per round (K), a positive integer"`
	LR         float64    `yaml:"lr" json:"lr" help:"the learning rate, a positive number"`
	Seed       int        `yaml:"seed" json:"seed" help:"the cell seed, a non-negative integer"`
	Topology   Topology   `yaml:"topology" json:"topology" help:"a mapping: {kind: ring|full, weights: metropolis-hastings}"`
	Algorithm  Algorithm  `yaml:"algorithm" json:"algorithm" help:"a mapping: {name: d-sum|gt-dsum, ...parameters}"`
	Evaluate   Evaluate   `yaml:"evaluate" json:"evaluate" help:"a mapping: {every: N}"`
	Checkpoint Checkpoint `yaml:"checkpoint" json:"checkpoint" help:"a mapping: {every: N}"`
	// Sweep maps dotted field paths to their normalised values (canonical
	// JSON). Parse fills it from the file's sweep block.
	Sweep map[string][]json.RawMessage `yaml:"-" json:"sweep,omitempty"`
}

// Task names the data set (or synthetic objective) and its parameters.
type Task struct {
	Dataset   string     `yaml:"dataset" json:"dataset" help:"one of: quadratic"`
	Quadratic *Quadratic `yaml:"quadratic" json:"quadratic,omitempty" help:"a mapping: {dim, zeta, kappa, sigma}"`
}

// Quadratic parameterises the heterogeneous quadratic of spec/algorithms.md.
type Quadratic struct {
	Dim   int     `yaml:"dim" json:"dim" help:"the dimension, a positive integer"`
	Zeta  float64 `yaml:"zeta" json:"zeta" help:"the heterogeneity, a number >= 0"`
	Kappa int     `yaml:"kappa" json:"kappa" help:"the curvature spread, a positive integer"`
	Sigma float64 `yaml:"sigma" json:"sigma" help:"the gradient noise, a number >= 0"`
}

// Topology chooses the communication graph and its mixing weights.
type Topology struct {
	Kind    string `yaml:"kind" json:"kind" help:"one of: ring, full"`
	Weights string `yaml:"weights" json:"weights" help:"one of: metropolis-hastings"`
}

// Algorithm names the optimizer and its parameters. Parameters that the
// named algorithm does not take must be absent; the ones it takes get
// defaults (see algorithmParams).
type Algorithm struct {
	Name        string   `yaml:"name" json:"name" help:"one of: d-sum, gt-dsum"`
	Alpha       *float64 `yaml:"alpha" json:"alpha,omitempty" help:"a number >= 0"`
	Beta        *float64 `yaml:"beta" json:"beta,omitempty" help:"a number in [0, 1)"`
	Lambda      *float64 `yaml:"lambda" json:"lambda,omitempty" help:"a number in [0, 1]"`
	TrackerInit string   `yaml:"tracker_init" json:"tracker_init,omitempty" help:"one of: paper, unbiased"`
}

// Evaluate sets how often per-round metrics are computed.
type Evaluate struct {
	Every int `yaml:"every" json:"every" help:"evaluate every N rounds (and at the last), a positive integer"`
}

// Checkpoint sets how often training state is saved for resuming.
type Checkpoint struct {
	Every int `yaml:"every" json:"every" help:"checkpoint every N rounds (and at the last), a positive integer"`
}

// algorithmParams lists, per algorithm, the parameters it takes and their
// defaults (the paper's: alpha=2, beta=0.9, lambda=0.8).
var algorithmParams = map[string][]string{
	"d-sum":   {"alpha", "beta"},
	"gt-dsum": {"alpha", "beta", "lambda", "tracker_init"},
}

// required lists the fields that have no default.
var required = []string{"version", "name", "task.dataset", "rounds", "lr", "algorithm.name"}

// fillDefaults sets every optional field that the source did not give;
// given reports whether a dotted path was present. It is idempotent.
func (m *Manifest) fillDefaults(given func(path string) bool) {
	setInt := func(path string, p *int, v int) {
		if !given(path) {
			*p = v
		}
	}
	setStr := func(path string, p *string, v string) {
		if !given(path) {
			*p = v
		}
	}
	setFloat := func(p **float64, v float64) {
		if *p == nil {
			*p = &v
		}
	}
	setInt("workers", &m.Workers, 10)
	setInt("local_steps", &m.LocalSteps, 1)
	setInt("seed", &m.Seed, 1)
	setStr("topology.kind", &m.Topology.Kind, "ring")
	setStr("topology.weights", &m.Topology.Weights, "metropolis-hastings")
	setInt("evaluate.every", &m.Evaluate.Every, 1)
	setInt("checkpoint.every", &m.Checkpoint.Every, 10)
	if m.Task.Dataset == "quadratic" {
		if m.Task.Quadratic == nil {
			m.Task.Quadratic = &Quadratic{}
		}
		q := m.Task.Quadratic
		setInt("task.quadratic.dim", &q.Dim, 20)
		setInt("task.quadratic.kappa", &q.Kappa, 4)
		if !given("task.quadratic.zeta") {
			q.Zeta = 1
		}
	}
	a := &m.Algorithm
	for _, p := range algorithmParams[a.Name] {
		switch p {
		case "alpha":
			setFloat(&a.Alpha, 2)
		case "beta":
			setFloat(&a.Beta, 0.9)
		case "lambda":
			setFloat(&a.Lambda, 0.8)
		case "tracker_init":
			setStr("algorithm.tracker_init", &a.TrackerInit, "paper")
		}
	}
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// validate checks ranges and cross-field rules. at gives the source
// position of a field path for error messages.
func (m *Manifest) validate(at func(path string) string) error {
	var errs []string
	bad := func(path, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("%s: field %q: %s", at(path), path, fmt.Sprintf(format, args...)))
	}
	oneOf := func(path, v string, allowed ...string) {
		for _, a := range allowed {
			if v == a {
				return
			}
		}
		bad(path, "%q is not allowed; use one of: %s", v, strings.Join(allowed, ", "))
	}
	if m.Version != SchemaVersion {
		bad("version", "%d is not supported; this ump reads version %d", m.Version, SchemaVersion)
	}
	if !nameRE.MatchString(m.Name) {
		bad("name", "%q is not allowed; use letters, digits, '.', '_' or '-'", m.Name)
	}
	oneOf("task.dataset", m.Task.Dataset, "quadratic")
	if q := m.Task.Quadratic; q != nil {
		if m.Task.Dataset != "quadratic" {
			bad("task.quadratic", "only allowed with dataset: quadratic")
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
	if m.Workers < 1 || m.Workers > 1024 {
		bad("workers", "%d is out of range; use an integer from 1 to 1024", m.Workers)
	}
	if m.Rounds < 1 {
		bad("rounds", "%d is out of range; use a positive integer", m.Rounds)
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
	oneOf("topology.kind", m.Topology.Kind, "ring", "full")
	oneOf("topology.weights", m.Topology.Weights, "metropolis-hastings")
	if m.Evaluate.Every < 1 {
		bad("evaluate.every", "%d is out of range; use a positive integer", m.Evaluate.Every)
	}
	if m.Checkpoint.Every < 1 {
		bad("checkpoint.every", "%d is out of range; use a positive integer", m.Checkpoint.Every)
	}
	a := m.Algorithm
	takes, known := algorithmParams[a.Name]
	if !known {
		names := make([]string, 0, len(algorithmParams))
		for n := range algorithmParams {
			names = append(names, n)
		}
		sort.Strings(names)
		oneOf("algorithm.name", a.Name, names...)
	} else {
		given := map[string]bool{"alpha": a.Alpha != nil, "beta": a.Beta != nil,
			"lambda": a.Lambda != nil, "tracker_init": a.TrackerInit != ""}
		for _, p := range []string{"alpha", "beta", "lambda", "tracker_init"} {
			if given[p] && !slices.Contains(takes, p) {
				bad("algorithm."+p, "%s does not take %s; its parameters are: %s", a.Name, p, strings.Join(takes, ", "))
			}
		}
	}
	if a.Alpha != nil && !(*a.Alpha >= 0) {
		bad("algorithm.alpha", "%g is out of range; use a number >= 0", *a.Alpha)
	}
	if a.Beta != nil && !(*a.Beta >= 0 && *a.Beta < 1) {
		bad("algorithm.beta", "%g is out of range; use a number in [0, 1)", *a.Beta)
	}
	if a.Lambda != nil && !(*a.Lambda >= 0 && *a.Lambda <= 1) {
		bad("algorithm.lambda", "%g is out of range; use a number in [0, 1]", *a.Lambda)
	}
	if a.TrackerInit != "" {
		oneOf("algorithm.tracker_init", a.TrackerInit, "paper", "unbiased")
	}
	if len(errs) > 0 {
		return &Error{Problems: errs}
	}
	return nil
}

// Error lists every problem found in a manifest, one per line.
type Error struct{ Problems []string }

func (e *Error) Error() string { return strings.Join(e.Problems, "\n") }
