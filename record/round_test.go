package record

import (
	"encoding/json"
	"math"
	"testing"
)

func TestMetricJSONCarriesNonFinite(t *testing.T) {
	in := map[string]Metric{
		"a":    0.1,
		"nan":  Metric(math.NaN()),
		"inf":  Metric(math.Inf(1)),
		"ninf": Metric(math.Inf(-1)),
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]Metric
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if out["a"] != 0.1 || !math.IsNaN(float64(out["nan"])) || !math.IsInf(float64(out["inf"]), 1) ||
		!math.IsInf(float64(out["ninf"]), -1) {
		t.Errorf("round trip %s gave %v", data, out)
	}
}
