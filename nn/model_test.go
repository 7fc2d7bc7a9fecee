package nn

import (
	"slices"
	"testing"

	"github.com/ump-lab/ump/manifests"
)

// TestModelsAreTheManifestsModels: the models a manifest may name
// (manifests.Models, declared there so that reading a manifest does not
// link the engine) are exactly those NewModel builds, in the same order.
func TestModelsAreTheManifestsModels(t *testing.T) {
	if got := modelNames(); !slices.Equal(got, manifests.Models) {
		t.Errorf("nn builds %q; manifests.Models names %q", got, manifests.Models)
	}
}
