package train

import (
	"context"

	"github.com/ump-lab/ump/algorithms"
	"github.com/ump-lab/ump/compress"
	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/nn"
	"github.com/ump-lab/ump/stages"
)

// deviceTrainer trains a GPU cell in a device cohort (Lockstep):
// its parameters and optimizer state stay on the device; a round sends
// the batches and comes back with the losses, a finite flag and, when
// asked for, the test scores. The exchange only counts the exact messages
// the device sent, so the rounds table has the host's columns.
type deviceTrainer struct {
	cfg      algorithms.Config
	seed     uint64
	k        int
	samplers []*sampler
	exchange *compress.Exchange
	sends    []string // the vectors the algorithm communicates
	initial  map[string][][]float32
	data     *datasets.Dataset
	shape    nn.CohortShape
	seat     *Seat
	own      *Seat // a seat of its own (no runner gave one), released at close
	m        *Member
	bound    float64
	loss     float64 // the last round's mean mini-batch loss
	finite   bool
	scores   *nn.CellScores // the last round's, when asked for
}

func newDeviceTrainer(ctx context.Context, env *stages.Env, cfg *Params, engines Engines) (*deviceTrainer, error) {
	data, samplers, _, err := loadPartition(ctx, env, cfg) // validation is refused on the device (manifests)
	if err != nil {
		return nil, err
	}
	model, err := nn.NewModel(
		cfg.Task.Model,
		nn.Input{Shape: data.Shape, Classes: data.Classes, Vocab: len(data.Vocab)},
	)
	if err != nil {
		return nil, err
	}
	x0 := make([]float32, model.Params)
	model.Init(x0, uint64(cfg.Seed))
	acfg := algorithmConfig(cfg)
	opt, err := algorithms.New(acfg, cfg.Workers, x0)
	if err != nil {
		return nil, err
	}
	trace, err := algorithms.TraceRound(acfg, algorithms.At{K: cfg.LocalSteps, LR: cfg.LR})
	if err != nil {
		return nil, err
	}
	exchange, err := compress.NewExchange(exchangeConfig(cfg), cfg.Workers, len(x0))
	if err != nil {
		return nil, err
	}
	d := &deviceTrainer{cfg: acfg, seed: uint64(cfg.Seed), k: cfg.LocalSteps, samplers: samplers, exchange: exchange,
		sends: trace.Sends, initial: opt.State(), data: data, bound: lossBound(data),
		shape: nn.CohortShape{
			Model:      cfg.Task.Model,
			Algorithm:  acfg.Name,
			Workers:    cfg.Workers,
			LocalSteps: cfg.LocalSteps,
			Batch:      cfg.BatchSize,
			Exact:      cfg.Engine == "",
		}} // a cell of the CPU engine has its bits wherever it trains
	if seat, ok := env.Seat.(*Seat); ok {
		d.seat = seat
	} else {
		newCohort, err := cohortOf(engines, cfg)
		if err != nil {
			return nil, err
		}
		d.own = NewLockstep(1, newCohort).Reserve(cohortKey(engines, cfg))
		d.seat = d.own
	}
	return d, nil
}

// join takes the cell's place in its cohort at its first round, with the
// initial or restored state.
func (d *deviceTrainer) join() error {
	if d.m != nil {
		return nil
	}
	m, err := d.seat.Join(d.data, d.shape, d.initial)
	if err != nil {
		return err
	}
	d.m, d.initial = m, nil
	return nil
}

// round runs the cell's round in its cohort's one execution: it has no
// local steps to report (step is not called).
func (d *deviceTrainer) round(t int, lr float64, mix algorithms.Mixing, evaluate bool, _ func(tau int) error) error {
	if err := d.join(); err != nil {
		return err
	}
	batches := make([][][]int, len(d.samplers))
	for i, s := range d.samplers {
		for step := range d.k {
			batches[i] = append(batches[i], s.batch(t*d.k+step))
		}
	}
	losses, finite, scores, err := d.m.Round(
		nn.CellRound{Config: d.cfg, Seed: d.seed, Round: t, LR: lr, Mix: mix, Batches: batches},
		evaluate,
	)
	if err != nil {
		return err
	}
	sum := 0.0 // in the host trainer's order: step by step, worker by worker
	for tau := range d.k {
		for i := range d.samplers {
			sum += losses[i*d.k+tau]
		}
	}
	d.loss, d.finite, d.scores = sum/float64(len(losses)), finite, scores
	for _, kind := range d.sends {
		d.exchange.CountExact(kind)
	}
	return nil
}

func (d *deviceTrainer) diverged() bool { return !(d.loss <= d.bound) || !d.finite }

func (d *deviceTrainer) metrics(round int) ([]float64, error) {
	scores := d.scores
	if scores == nil { // not asked for with the round (a diverged round)
		var err error
		if scores, err = d.m.Evaluate(); err != nil {
			return nil, err
		}
	}
	return append(neuralRow(round, d.loss, *scores), d.exchange.Row()...), nil
}

func (d *deviceTrainer) state() (map[string][][]float32, map[string]float64, error) {
	vectors, err := d.m.State() // after a round: the cell has joined
	if err != nil {
		return nil, nil, err
	}
	return vectors, d.exchange.Counters(), nil
}

func (d *deviceTrainer) restore(saved *TrainState) error {
	if err := restoreVectors(d.initial, saved.Vectors); err != nil {
		return err
	}
	return d.exchange.Restore(saved.Vectors, saved.Counters)
}

func (d *deviceTrainer) cohort() int { return d.seat.Size() }

func (d *deviceTrainer) close() {
	if d.m != nil {
		d.m.Leave()
	}
	if d.own != nil {
		d.own.Release()
	}
}
