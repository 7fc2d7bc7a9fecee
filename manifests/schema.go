package manifests

import (
	"encoding/json"
	"fmt"
	"math"
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

// ScaledRounds is the number of rounds a cell runs: rounds x scale,
// rounded to the nearest integer and at least 1.
func (m *Manifest) ScaledRounds() int {
	if m.Scale == nil {
		return m.Rounds
	}
	return max(1, int(math.Round(float64(m.Rounds)**m.Scale)))
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
