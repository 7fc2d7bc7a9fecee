package codecs

import "github.com/ump-lab/ump/kinds"

// The parameters; memory and gamma apply to every codec but none.
var (
	ratio = kinds.Param{
		Name:    "ratio",
		Type:    kinds.Float,
		Range:   "(0, 1]",
		Default: 0.01,
		Doc:     "the fraction of entries sent",
	}
	tau = kinds.Param{
		Name:     "tau",
		Type:     kinds.Float,
		Range:    "[0, inf)",
		Doc:      "threshold sends the entries with |t| > tau",
		Required: "threshold needs tau: entries with |t| > tau are sent, e.g. 0.001",
	}
	levels = kinds.Param{
		Name:    "levels",
		Type:    kinds.Int,
		Range:   "[1, inf)",
		Default: 16,
		Doc:     "qsgd's quantization levels",
	}
	bucket = kinds.Param{
		Name:    "bucket",
		Type:    kinds.Int,
		Range:   "[1, inf)",
		Default: 512,
		Doc:     "qsgd's entries per norm",
	}
	rank   = kinds.Param{Name: "rank", Type: kinds.Int, Range: "[1, inf)", Default: 1, Doc: "powersgd's rank"}
	memory = kinds.Param{Name: "memory", Type: kinds.String, Choices: []string{"none", "residual"}, Default: "residual",
		Doc: "error feedback of the all-reduce algorithms' messages"}
	gamma = kinds.Param{
		Name:    "gamma",
		Type:    kinds.Float,
		Range:   "(0, 1]",
		Default: 0.5,
		Doc:     "the CHOCO-gossip consensus step",
	}
)

// compressing lists a codec's own parameters with memory and gamma.
func compressing(own ...kinds.Param) []kinds.Param { return append(own, memory, gamma) }

// Family declares every codec (GRACE's names) and its parameters;
// package compress binds each to its constructor.
var Family = kinds.Schema{Field: "compression", Key: "codec", Kinds: []kinds.Kind[struct{}]{
	{Name: "none", Doc: "float32 values, exact"},
	{Name: "fp16", Doc: "IEEE half, round to nearest even", Params: compressing()},
	{Name: "topk", Doc: "the largest magnitudes as index + value", Params: compressing(ratio)},
	{Name: "randomk", Doc: "values at indices drawn alike on every worker", Params: compressing(ratio)},
	{Name: "threshold", Doc: "entries with |t| > tau as index + value", Params: compressing(tau)},
	{
		Name:   "qsgd",
		Doc:    "per bucket its norm, per entry a sign and a stochastic level",
		Params: compressing(levels, bucket),
	},
	{Name: "terngrad", Doc: "max|t| and a stochastic ternary per entry", Params: compressing()},
	{Name: "sign", Doc: "mean|t| and a sign bit per entry", Params: compressing()},
	{Name: "efsign", Doc: "sign, always with error feedback", Params: compressing(),
		Check: func(v kinds.Values, _ kinds.Cell) []kinds.Problem {
			if v.String("memory") == "none" {
				return []kinds.Problem{
					{Param: "memory", Msg: "efsign is sign with error feedback; use memory: residual, or codec: sign"},
				}
			}
			return nil
		}},
	{
		Name:   "onebit",
		Doc:    "the means of the non-negative and negative entries and a bit per entry",
		Params: compressing(),
	},
	{Name: "natural", Doc: "stochastic rounding to a power of two", Params: compressing()},
	{Name: "powersgd", Doc: "a rank-r power iteration on the vector as a matrix", Params: compressing(rank)},
}}

// Sent are the vectors with columns of their own in a rounds table: the
// model x, D-SUM's v and the trackers y. (All-reduce algorithms send x's
// change over the round.) A vector of another name that an algorithm
// sends counts in bits_sent_per_worker: the columns stay fixed, so adding
// an algorithm never changes the tables cells have recorded.
var Sent = []string{"x", "v", "y"}

// Columns are the metric columns the exchange adds to a rounds table:
// bits_sent_per_worker (cumulative, all kinds), then per kind its
// cumulative bits, and over the rounds since the previous row its
// compression ratio against float32 and its mean relative compression
// error |C(t)-t|/|t| (NaN for kinds the algorithm does not send).
var Columns = columns()

func columns() []string {
	cols := []string{"bits_sent_per_worker"}
	for _, k := range Sent {
		cols = append(cols, "bits_"+k, "compression_ratio_"+k, "compression_error_"+k)
	}
	return cols
}
