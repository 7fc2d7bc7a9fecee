package stages

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
)

func TestMetricJSONCarriesNonFinite(t *testing.T) {
	in := map[string]Metric{"a": 0.1, "nan": Metric(math.NaN()), "inf": Metric(math.Inf(1)), "ninf": Metric(math.Inf(-1))}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]Metric
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if out["a"] != 0.1 || !math.IsNaN(float64(out["nan"])) || !math.IsInf(float64(out["inf"]), 1) || !math.IsInf(float64(out["ninf"]), -1) {
		t.Errorf("round trip %s gave %v", data, out)
	}
}

// TestManifestDatasetsMatchCatalog keeps the manifest schema's list of data
// sets in step with what the datasets package loads.
func TestManifestDatasetsMatchCatalog(t *testing.T) {
	want := append([]string{"quadratic", "synthetic"}, datasets.Names()...)
	if got := slices.Sorted(slices.Values(manifests.Datasets)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("manifests.Datasets = %v, want %v", got, want)
	}
}
