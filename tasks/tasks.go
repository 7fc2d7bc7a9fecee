package tasks

// The engines (the manifest's engine): nn's CPU engine, the default, and
// the GoMLX engine.
const (
	CPU = "cpu"
	GPU = "gpu"
)

// Engines are the values of a manifest's engine.
var Engines = []string{CPU, GPU}

// Kind declares one kind of task.
type Kind struct {
	Name string
	Doc  string
	// Samples is whether the task trains a model on a data set's samples:
	// only then does a cell take a model, batch_size, partition and
	// validation. A task without samples gives each worker its own
	// closed-form objective, parameterised by the task's own block
	// (task.quadratic).
	Samples bool
	// Engines are the engines that may train it, the default first.
	Engines []string
	// GoEngine names the plain-Go code that computes a task the nn engines
	// do not train (it enters the cell key); "" for one they train.
	GoEngine string
	// Columns are the metric columns of its rounds table, "round" first;
	// ValidationColumns follow them in a cell with validation.
	Columns, ValidationColumns []string
	// Value is the figure its tables show unless a manifest's table says.
	Value string
}

// Quadratic is the heterogeneous quadratic of docs/algorithms.md: worker
// i minimises f_i(x) = 0.5 sum_j a_ij (x_j - b_ij)^2, in plain float32 Go.
var Quadratic = Kind{
	Name:     "quadratic",
	Doc:      "each worker's own closed-form quadratic objective",
	Engines:  []string{CPU},
	GoEngine: "go-cpu-float32/v1",
	Columns:  []string{"round", "train_loss", "consensus_distance", "objective_gap", "grad_norm_sq"},
	Value:    "objective_gap",
}

// Classification trains a model on a data set's samples (the synthetic
// Gaussian mixture included). test_* score each worker's local model on
// the whole test split (the paper reports test_acc_mean; std is over
// workers, ddof 0); consensus_* score the average of the workers'
// parameters; val_* score each worker's model on the samples all workers
// hold out (what tuning reads instead of the test split), the mean over
// workers.
var Classification = Kind{
	Name:    "classification",
	Doc:     "a model trained on a data set's samples",
	Samples: true,
	Engines: Engines,
	Columns: []string{"round", "train_loss", "test_loss_mean", "test_acc_mean", "test_acc_std",
		"test_acc_min", "test_acc_max", "consensus_loss", "consensus_acc", "consensus_distance"},
	ValidationColumns: []string{"val_loss_mean", "val_acc_mean"},
	Value:             "test_acc_mean",
}

// Of is the kind of task of data set dataset: the quadratic's own name
// selects it, and every data set is classification.
func Of(dataset string) *Kind {
	if dataset == Quadratic.Name {
		return &Quadratic
	}
	return &Classification
}
