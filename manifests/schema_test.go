package manifests

import (
	"strings"
	"testing"
)

// TestModelsPairWithDataSetsByShape: a data set pairs with the models
// that read its declared shape (datasets.Info.Shape, the synthetic task's
// vectors), and a model that does not is refused naming both and the
// models that fit.
func TestModelsPairWithDataSetsByShape(t *testing.T) {
	for _, tc := range []struct {
		task, want string // want: "" for a manifest that parses
	}{
		{"{dataset: mnist, model: cnn}", ""},
		{"{dataset: cifar10, model: lenet}", ""},
		{"{dataset: synthetic, model: logreg}", ""},
		{"{dataset: agnews, model: embedding-bag}", ""},
		{"{dataset: cifar10, model: cnn}",
			`field "task.model": cnn reads 28x28 images (EMNIST's); cifar10 gives 3x32x32 images (use lenet, mlp, ` +
				`logreg)`},
		{"{dataset: agnews, model: mlp}",
			`field "task.model": mlp reads images or vectors; agnews gives text (use embedding-bag)`},
		{"{dataset: synthetic, model: lenet, synthetic: {dims: 8}}",
			`field "task.model": lenet reads square images of side at most 32 (padded to 32), such as 1x28x28 or ` +
				`3x32x32; synthetic gives vectors of 8 (use mlp, logreg)`},
		{"{dataset: emnist-letters, model: embedding-bag}",
			`field "task.model": embedding-bag reads text (token bags); emnist-letters gives 1x28x28 images (use ` +
				`lenet, cnn, mlp, logreg)`},
	} {
		_, err := Parse(
			"m.yaml",
			[]byte("version: 1\nname: m\ntask: "+tc.task+"\nrounds: 2\nlr: 0.1\nalgorithm: {name: d-sum}\n"),
		)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.task, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v\nwant %s", tc.task, err, tc.want)
		}
	}
}
