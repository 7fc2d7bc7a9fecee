package manifests

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/kinds"
	"github.com/ump-lab/ump/tasks"
)

// SchemaVersion is the manifest schema this package reads; it enters the hash.
const SchemaVersion = 1

// Manifest is one experiment configuration. Field tags: yaml is the key in the
// file, help says what is allowed (quoted in error messages).
type Manifest struct {
	Version int    `yaml:"version" json:"version" help:"the schema version, 1"`
	Name    string `yaml:"name" json:"name" help:"a name of letters, digits, '.', '_' or '-', at most 200 characters"`
	Task    Task   `yaml:"task" json:"task" help:"a mapping: {dataset: mnist, model: lenet} or {dataset: quadratic, quadratic: {...}}"`
	Workers int    `yaml:"workers" json:"workers" help:"the number of workers, an integer from 1 to 1024"`
	Rounds  int    `yaml:"rounds" json:"rounds" help:"the number of communication rounds, a positive integer"`
	// Scale is nil when rounds run in full (scale 1, the default); a plan's
	// cells run ScaledRounds rounds.
	Scale      *float64 `yaml:"scale" json:"scale,omitempty" help:"a number in (0, 1]: every cell runs rounds x scale rounds (rounded, at least 1) for a quick look (default 1)"`
	LocalSteps int      `yaml:"local_steps" json:"local_steps" help:"local steps per round (K), a positive integer"`
	LR         float64  `yaml:"lr" json:"lr" help:"the learning rate, a positive number"`
	// LRSchedule is nil for a constant learning rate without warmup.
	LRSchedule *Schedule `yaml:"lr_schedule" json:"lr_schedule,omitempty" help:"a mapping: {kind: constant|step|cosine, warmup: ROUNDS, milestones: [ROUND, ...], gamma}"`
	BatchSize  int       `yaml:"batch_size" json:"batch_size,omitempty" help:"samples per worker and local step, a positive integer (default 128; data sets only)"`
	// Engine is "" for the CPU engine (the default) or tasks.GPU (OnGPU).
	Engine      string     `yaml:"engine" json:"engine,omitempty" help:"cpu or gpu: the training engine of data-set cells (gpu needs a build with -tags xla)"`
	WeightDecay float64    `yaml:"weight_decay" json:"weight_decay,omitempty" help:"the L2 weight decay added to every gradient, a number >= 0"`
	Seed        int        `yaml:"seed" json:"seed" help:"the cell seed, a non-negative integer"`
	Partition   *Partition `yaml:"partition" json:"partition,omitempty" help:"a mapping: {kind: iid, dirichlet or shards, ...its parameters}"`
	Topology    Topology   `yaml:"topology" json:"topology" help:"a mapping: {kind: a topology, weights, ...its parameters}"`
	Algorithm   Algorithm  `yaml:"algorithm" json:"algorithm" help:"a mapping: {name: an algorithm, ...its parameters}"`
	// Compression is nil for exact communication (codec none).
	Compression *Compression `yaml:"compression" json:"compression,omitempty" help:"a mapping: {codec: a codec, ...its parameters, memory, gamma}"`
	Evaluate    Evaluate     `yaml:"evaluate" json:"evaluate" help:"a mapping: {every: N}"`
	// Validation is nil when every sample of a worker's partition trains.
	Validation *Validation `yaml:"validation" json:"validation,omitempty" help:"a mapping: {fraction: F}: each worker holds out a stratified F of its partition, never trained on, scored as val_acc_mean and val_loss_mean (data sets, CPU engine)"`
	Checkpoint Checkpoint  `yaml:"checkpoint" json:"checkpoint" help:"a mapping: {every: N}"`
	// Table says how `ump table` presents the results; it is not part of
	// any cell.
	Table *Table `yaml:"table" json:"table,omitempty" help:"a mapping: {rows: [...], columns: [...], value, best, select}"`
	// Sweep maps dotted field paths to their normalised values (canonical
	// JSON). Parse fills it from the file's sweep block.
	Sweep map[string][]json.RawMessage `yaml:"-" json:"sweep,omitempty"`
	// Add lists cells beyond the sweep's product, each a value of every
	// swept path (normalised, canonical JSON): seeds added where an entry
	// needs them. Parse fills it from the file's add block.
	Add []map[string]json.RawMessage `yaml:"-" json:"add,omitempty"`
}

// Task names the data set (or synthetic objective), the model and their
// parameters.
type Task struct {
	Dataset   string     `yaml:"dataset" json:"dataset" help:"a data set name (see Datasets)"`
	Model     string     `yaml:"model" json:"model,omitempty" help:"one of: lenet, cnn, embedding-bag, mlp, logreg"`
	Quadratic *Quadratic `yaml:"quadratic" json:"quadratic,omitempty" help:"a mapping: {dim, zeta, kappa, sigma}"`
	Synthetic *Synthetic `yaml:"synthetic" json:"synthetic,omitempty" help:"a mapping: {dims, classes, train, test, separation}"`
}

// Datasets are the values of task.dataset: the quadratic objective and
// the data sets of the datasets catalogue (the synthetic Gaussian mixture
// among them).
func Datasets() []string { return append([]string{tasks.Quadratic.Name}, datasets.Names()...) }

// generated reports whether the task's data set is generated from its
// parameters (the task.synthetic block) rather than read from files.
func (t Task) generated() bool {
	info, ok := datasets.Lookup(t.Dataset)
	return ok && info.Generate != nil
}

// Model is a value of task.model: a model nn builds, and the inputs it
// reads. Declared here so that reading a manifest does not link the
// engine; nn's tests check that it builds exactly these, each for the
// input shapes Reads accepts and for no other.
type Model struct {
	Name string
	Doc  string // what it reads, in words
	// Reads reports whether the model reads samples of a data set's shape
	// (datasets.Info.Shape: [C, H, W] images, [D] vectors, nil text).
	Reads func(shape []int) bool
}

// Models are the models a manifest may name: a data set pairs with those
// that read its shape.
var Models = []Model{
	{Name: "lenet", Doc: "square images of side at most 32 (padded to 32), such as 1x28x28 or 3x32x32",
		Reads: func(s []int) bool { return len(s) == 3 && s[1] == s[2] && s[1] <= 32 && (32-s[1])%2 == 0 }},
	{
		Name:  "cnn",
		Doc:   "28x28 images (EMNIST's)",
		Reads: func(s []int) bool { return len(s) == 3 && s[1] == 28 && s[2] == 28 },
	},
	{Name: "embedding-bag", Doc: "text (token bags)", Reads: func(s []int) bool { return len(s) == 0 }},
	{Name: "mlp", Doc: "images or vectors", Reads: func(s []int) bool { return len(s) > 0 }},
	{Name: "logreg", Doc: "images or vectors", Reads: func(s []int) bool { return len(s) > 0 }},
}

// ModelNames are the models' names, in Models' order.
func ModelNames() []string {
	names := make([]string, len(Models))
	for i, m := range Models {
		names[i] = m.Name
	}
	return names
}

// ModelsReading are the names of the models that read samples of shape.
func ModelsReading(shape []int) []string {
	var names []string
	for _, m := range Models {
		if m.Reads(shape) {
			names = append(names, m.Name)
		}
	}
	return names
}

// InputWords describes samples of a shape: "1x28x28 images", "vectors of
// 20" or "text".
func InputWords(shape []int) string {
	switch len(shape) {
	case 0:
		return "text"
	case 1:
		return fmt.Sprintf("vectors of %d", shape[0])
	}
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	return strings.Join(dims, "x") + " images"
}

// inputShape is one sample's shape of the task's data set, where it is
// known without loading it: a file-based data set's declared shape, the
// synthetic task's vectors.
func (t Task) inputShape() ([]int, bool) {
	switch info, ok := datasets.Lookup(t.Dataset); {
	case ok && info.Generate == nil:
		return info.Shape, true
	case ok && t.Synthetic != nil:
		return []int{t.Synthetic.Dims}, true
	}
	return nil, false
}

// Kind is the kind of task its data set selects.
func (t Task) Kind() *tasks.Kind { return tasks.Of(t.Dataset) }

// OnGPU reports whether the manifest's cells train on the GPU engine.
func (m *Manifest) OnGPU() bool { return m.Engine == tasks.GPU }

// defaultModel is the model of the paper for each data set (the
// catalogue's Model).
func defaultModel(dataset string) string {
	if info, ok := datasets.Lookup(dataset); ok {
		return info.Model
	}
	return ""
}

// Synthetic parameterises the seeded Gaussian-mixture classification task.
type Synthetic struct {
	Dims       int     `yaml:"dims" json:"dims" help:"the input dimension, a positive integer"`
	Classes    int     `yaml:"classes" json:"classes" help:"the number of classes, an integer >= 2"`
	Train      int     `yaml:"train" json:"train" help:"the training samples, a positive integer"`
	Test       int     `yaml:"test" json:"test" help:"the test samples, a positive integer"`
	Separation float64 `yaml:"separation" json:"separation" help:"the spread of the class means, a number > 0"`
}

// trainSamples is the size of the task's training split where it is known
// here (the file-based data sets' official size, a synthetic task's), else
// 0.
func (m *Manifest) trainSamples() int {
	if m.Task.generated() && m.Task.Synthetic != nil {
		return m.Task.Synthetic.Train
	} else if info, ok := datasets.Lookup(m.Task.Dataset); ok {
		return info.TrainSamples()
	}
	return 0
}

// largestWorker is the most training samples a worker can hold under the
// partition (all but the others' least, or an equal share under iid), or 0
// where the data set's size is not known here.
func (m *Manifest) largestWorker() int {
	n := m.trainSamples()
	if n == 0 || m.Workers < 1 || m.Partition == nil {
		return 0
	}
	if m.Partition.Kind == "iid" {
		return (n + m.Workers - 1) / m.Workers
	}
	return n - (m.Workers-1)*max(1, m.Partition.Params.Int("min_size"))
}

// Partition chooses how training samples are split over workers: a kind
// of split.Partitions and its parameters.
type Partition struct {
	Kind   string
	Params kinds.Values
}

// Quadratic parameterises the heterogeneous quadratic of docs/algorithms.md.
type Quadratic struct {
	Dim   int     `yaml:"dim" json:"dim" help:"the dimension, a positive integer"`
	Zeta  float64 `yaml:"zeta" json:"zeta" help:"the heterogeneity, a number >= 0"`
	Kappa int     `yaml:"kappa" json:"kappa" help:"the curvature spread, a positive integer"`
	Sigma float64 `yaml:"sigma" json:"sigma" help:"the gradient noise, a number >= 0"`
}

// Topology chooses the communication graph (static, or a schedule over
// rounds) and its mixing weights: a kind of graphs.Topologies and its
// parameters.
type Topology struct {
	Kind   string
	Params kinds.Values
}

// Algorithm names the optimizer, one of optimizers.Family, and its
// parameters. Parameters that the named algorithm does not take must be
// absent; the ones it takes get their declared defaults.
type Algorithm struct {
	Name   string
	Params kinds.Values
}

// Compression chooses the codec of every message workers send (GRACE
// names, codecs.Family) and its parameters; memory and gamma apply to
// every codec but none. Gossip algorithms use CHOCO-gossip with step
// gamma; all-reduce algorithms (local-sgd-m, slowmo) compress the round's
// update, with error feedback when memory is residual.
type Compression struct {
	Codec  string
	Params kinds.Values
}

// Schedule shapes the learning rate over rounds: an optional linear warmup
// (lr (t+1)/warmup in round t < warmup), then constant, step (times gamma
// from each milestone round on) or cosine (down to 0 at the last round).
type Schedule struct {
	Kind       string   `yaml:"kind" json:"kind" help:"one of: constant, step, cosine"`
	Warmup     int      `yaml:"warmup" json:"warmup,omitempty" help:"rounds of linear warmup, an integer >= 0"`
	Milestones []int    `yaml:"milestones" json:"milestones,omitempty" help:"a list of increasing round numbers from 1 to rounds-1"`
	Gamma      *float64 `yaml:"gamma" json:"gamma,omitempty" help:"the factor at each milestone, a number in (0, 1]"`
}

// scheduleParams lists, per schedule kind, the parameters it takes.
var scheduleParams = map[string][]string{
	"constant": {"warmup"},
	"step":     {"warmup", "milestones", "gamma"},
	"cosine":   {"warmup"},
}

// Table chooses how `ump table` lays out the final results: row and column
// labels are the values of manifest paths, each entry aggregates the seeds
// (mean ± std), and a select path (lr) is tuned per entry.
type Table struct {
	Rows    []string `yaml:"rows" json:"rows" help:"a list of manifest paths whose values label the rows, e.g. [algorithm]"`
	Columns []string `yaml:"columns" json:"columns,omitempty" help:"a list of manifest paths whose values label the columns, e.g. [partition.alpha]"`
	Value   string   `yaml:"value" json:"value" help:"a column of the final table, e.g. test_acc_mean or objective_gap"`
	Also    []string `yaml:"also" json:"also,omitempty" help:"a list of more columns of the final table shown in each entry beside value, at the choice value makes, e.g. [consensus_acc]"`
	Best    string   `yaml:"best" json:"best" help:"max or min: which value is better (default: min for losses, gaps, distances and norms, else max)"`
	Select  string   `yaml:"select" json:"select,omitempty" help:"a swept path tuned per entry by the value, e.g. lr, or {by: lr, seeds: [1, 2], per: [row, entry]}: seeds, tuned on those seeds, which the entries then leave out; per, tuned per entry or once per row (by the mean over its columns), the first scope laying out the table and the others shown beside it"`
	// SelectSeeds are the seeds the select path is tuned on and the
	// entries leave out (select: {by: PATH, seeds: [...]}); nil: every
	// seed tunes and is reported (the paper's protocol).
	SelectSeeds []int `yaml:"-" json:"-"`
	// SelectPer are the scopes the select path is tuned in (select: {by:
	// PATH, per: [row, entry]}): "entry", each entry its own choice, or
	// "row", one choice for the whole row, by the mean over its columns.
	// The first lays out the table; the others are shown beside it. nil:
	// per entry.
	SelectPer []string `yaml:"-" json:"-"`
	Digits    int      `yaml:"digits" json:"digits" help:"decimals shown, an integer from 0 to 12 (default 4)"`
	// Labels renames what figures show: a row or column value as the
	// table prints it, a path, or a figure column.
	Labels map[string]string `yaml:"labels" json:"labels,omitempty" help:"a mapping from what tables print (a row value such as d-sum(alpha=2,beta=0.9), a path such as partition.alpha, a column such as test_acc_mean) to the label figures show, e.g. {test_acc_mean: test accuracy}"`
}

// Select scopes (Table.SelectPer).
const (
	PerEntry = "entry"
	PerRow   = "row"
)

// SelectScopes are the scopes select may be tuned in.
var SelectScopes = []string{PerEntry, PerRow}

// Scope is the scope the table's select path is tuned in: the first of
// SelectPer, else per entry.
func (t Table) Scope() string {
	if len(t.SelectPer) == 0 {
		return PerEntry
	}
	return t.SelectPer[0]
}

// Scoped is the table tuned in scope alone (one of SelectScopes).
func (t Table) Scoped(scope string) Table {
	t.SelectPer = []string{scope}
	return t
}

// MarshalJSON writes select as {"by": PATH, "seeds": [...], "per": [...]}
// where the table tunes on seeds of its own or in a declared scope, else
// as the path alone (so that tables without them keep their hashes).
func (t Table) MarshalJSON() ([]byte, error) {
	type plain Table
	if len(t.SelectSeeds) == 0 && len(t.SelectPer) == 0 {
		return json.Marshal(plain(t))
	}
	return json.Marshal(struct {
		plain
		Select selection `json:"select"`
	}{plain(t), selection{t.Select, t.SelectSeeds, t.SelectPer}})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *Table) UnmarshalJSON(data []byte) error {
	type plain Table
	var v struct {
		plain
		Select json.RawMessage `json:"select"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*t = Table(v.plain)
	switch {
	case len(v.Select) == 0:
		return nil
	case v.Select[0] == '"':
		return json.Unmarshal(v.Select, &t.Select)
	}
	var sel selection
	err := json.Unmarshal(v.Select, &sel)
	t.Select, t.SelectSeeds, t.SelectPer = sel.By, sel.Seeds, sel.Per
	return err
}

// selection is table.select in its mapping form.
type selection struct {
	By    string   `json:"by"`
	Seeds []int    `json:"seeds,omitempty"`
	Per   []string `json:"per,omitempty"`
}

// Unplaced lists, in the order given, the swept paths the layout does not
// account for: each must be a row or column path (or lie under or over
// one), the select path, or seed (aggregated over).
func (t *Table) Unplaced(swept []string) []string {
	placed := slices.Concat(t.Rows, t.Columns, []string{t.Select, "seed"})
	return slices.DeleteFunc(slices.Clone(swept), func(path string) bool {
		return slices.ContainsFunc(placed, func(p string) bool {
			return p != "" && (p == path || strings.HasPrefix(path, p+".") || strings.HasPrefix(p, path+"."))
		})
	})
}

// Evaluate sets how often per-round metrics are computed.
type Evaluate struct {
	Every int `yaml:"every" json:"every" help:"evaluate every N rounds (and at the last), a positive integer"`
}

// Validation holds out part of each worker's partition for tuning.
type Validation struct {
	Fraction float64 `yaml:"fraction" json:"fraction" help:"the share of each worker's samples held out, a number in (0, 0.5]"`
}

// Checkpoint sets how often training state is saved for resuming.
type Checkpoint struct {
	Every int `yaml:"every" json:"every" help:"checkpoint every N rounds (and at the last), a positive integer"`
}

// required lists the fields that have no default.
// maxNameLength bounds a manifest's name, which names its results
// directory (NAME-HASH12) on every file system.
const maxNameLength = 200

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
	if m.Evaluate.Every < 1 {
		bad("evaluate.every", "%d is out of range; use a positive integer", m.Evaluate.Every)
	}
	if m.Checkpoint.Every < 1 {
		bad("checkpoint.every", "%d is out of range; use a positive integer", m.Checkpoint.Every)
	}
	m.validateData(bad)
	m.validateSchedule(bad, oneOf)
	if m.Compression != nil {
		validateBlock(m.Compression, cell, bad, oneOf)
	}
	if !(m.WeightDecay >= 0) {
		bad("weight_decay", "%g is out of range; use a number >= 0", m.WeightDecay)
	}
	validateBlock(&m.Algorithm, cell, bad, oneOf)
	if len(errs) > 0 {
		return &Error{Problems: errs}
	}
	return nil
}

// validateNumbers checks the ranges of the cell's counts and numbers.
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

// ScaledRounds is the number of rounds a cell runs: rounds x scale,
// rounded to the nearest integer and at least 1.
func (m *Manifest) ScaledRounds() int {
	if m.Scale == nil {
		return m.Rounds
	}
	return max(1, int(math.Round(float64(m.Rounds)**m.Scale)))
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

// BestFor says which value of a figure is better: min for losses, gaps,
// distances and norms, max otherwise (accuracies).
func BestFor(value string) string {
	for _, suffix := range []string{"loss", "gap", "distance", "norm_sq"} {
		if strings.HasSuffix(value, suffix) {
			return "min"
		}
	}
	return "max"
}

// Error lists every problem found in a manifest, one per line.
type Error struct{ Problems []string }

func (e *Error) Error() string { return strings.Join(e.Problems, "\n") }
