package record

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/ump-lab/ump/artifacts"
)

// RoundReport is one finished round of a rounded stage.
type RoundReport struct {
	Round      int               `json:"round"` // completed rounds, from 1
	Rounds     int               `json:"rounds"`
	Metrics    map[string]Metric `json:"metrics,omitempty"`
	Checkpoint *artifacts.Ref    `json:"checkpoint,omitempty"`
	Seconds    float64           `json:"seconds"` // compute time since the previous report
	// EvaluateEvery is how often the run that reported the round
	// evaluates (its checkpoint's rows hold those rounds); 0 where ump did
	// not record it.
	EvaluateEvery int `json:"evaluate_every,omitempty"`
}

// Metric is a float64 whose JSON form also carries NaN and ±Inf (as the
// strings "NaN", "+Inf", "-Inf").
type Metric float64

func (m Metric) MarshalJSON() ([]byte, error) {
	f := float64(m)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return json.Marshal(strconv.FormatFloat(f, 'g', -1, 64))
	}
	return json.Marshal(f)
}

func (m *Metric) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		f, err := strconv.ParseFloat(s, 64)
		*m = Metric(f)
		return err
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*m = Metric(f)
	return err
}
