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
	if got := modelNames(); !slices.Equal(got, manifests.ModelNames()) {
		t.Errorf("nn builds %q; manifests.Models names %q", got, manifests.ModelNames())
	}
}

// TestModelsReadWhatTheManifestsSay: NewModel builds each model for the
// input shapes its declaration (manifests.Model.Reads) accepts, and for
// no other, over the shapes of every data set and around them.
func TestModelsReadWhatTheManifestsSay(t *testing.T) {
	shapes := [][]int{nil, {20}, {784}, {1, 28, 28}, {3, 32, 32}, {1, 32, 32}, {3, 28, 28}, {1, 30, 30}, {1, 16, 16},
		{1, 29, 29}, {1, 28, 32}, {1, 36, 36}, {3, 24, 24}}
	for _, md := range manifests.Models {
		for _, shape := range shapes {
			_, err := NewModel(md.Name, Input{Shape: shape, Classes: 10, Vocab: 50})
			if want := md.Reads(shape); (err == nil) != want {
				t.Errorf("%s on %v: NewModel says %v; manifests.Models says it reads it: %v", md.Name, shape, err, want)
			}
		}
	}
}
