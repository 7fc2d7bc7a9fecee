package datasets_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ump-lab/ump/datasets"
	"github.com/ump-lab/ump/manifests"
)

// kmnist is the entry docs/adding-a-dataset.md adds: Kuzushiji-MNIST,
// IDX files like MNIST's.
var kmnist = &datasets.Info{
	Name: "kmnist", Classes: 10, Shape: []int{1, 28, 28}, Model: "lenet",
	Description: "Kuzushiji-MNIST cursive Japanese characters, 1x28x28",
	Files:       "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte",
	Expect:      [2]int{60000, 10000},
	Load:        func(dir string) (*datasets.Dataset, error) { return datasets.LoadIDX(dir, "", 10, false, 0) },
	From: []datasets.Source{datasets.URLFiles{Base: "http://codh.rois.ac.jp/kmnist/dataset/kmnist/",
		Files: []string{
			"train-images-idx3-ubyte.gz",
			"train-labels-idx1-ubyte.gz",
			"t10k-images-idx3-ubyte.gz",
			"t10k-labels-idx1-ubyte.gz",
		}}},
}

// TestANewDataSetFollowsTheGuide adds KMNIST as docs/adding-a-dataset.md
// says: one catalogue entry, its loader LoadIDX. The catalogue then lists
// it, a library loads files in the official format from its directory
// and holds them to the declared shape, and a manifest takes it, with its
// model by default and the models that read 1x28x28 images, refusing the
// others; a second entry of its name is refused.
func TestANewDataSetFollowsTheGuide(t *testing.T) {
	entry := *kmnist // or, where someone followed the guide with kmnist itself, a name the catalogue lacks
	for slices.Contains(datasets.Names(), entry.Name) {
		entry.Name += "-again"
	}
	name := entry.Name
	if err := datasets.Add(&entry); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { datasets.Remove(name) })
	if !slices.Contains(datasets.Names(), name) || !slices.Contains(manifests.Datasets(), name) {
		t.Fatalf("the catalogue lists %q; manifests take %q", datasets.Names(), manifests.Datasets())
	}
	if err := datasets.Add(&entry); err == nil ||
		!strings.Contains(err.Error(), "the catalogue has a data set of that name") {
		t.Errorf("a second %s: %v", name, err)
	}

	root := t.TempDir()
	dir := filepath.Join(root, name)
	os.Mkdir(dir, 0o755)
	for _, split := range []struct {
		name string
		n    int
	}{{"train", 6}, {"t10k", 2}} {
		pixels := make([]byte, split.n*28*28)
		labels := make([]byte, split.n)
		for i := range labels {
			labels[i] = byte(i % 10)
			pixels[i*28*28+i] = 255
		}
		datasets.WriteIDX(
			t,
			filepath.Join(dir, split.name+"-images-idx3-ubyte.gz"),
			0x803,
			[]int{split.n, 28, 28},
			pixels,
		)
		datasets.WriteIDX(t, filepath.Join(dir, split.name+"-labels-idx1-ubyte.gz"), 0x801, []int{split.n}, labels)
	}
	if !entry.Installed(root) {
		t.Errorf("%s's files are in %s; Installed says not", name, dir)
	}
	d, err := datasets.NewLibrary(root).Load(name, datasets.Synthetic{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.Len() != 6 || d.Test.Len() != 2 || d.Classes != 10 || !slices.Equal(d.Shape, []int{1, 28, 28}) ||
		d.Train.Pixels[28*28+1] != 255 {
		t.Errorf("loaded %d+%d samples of %d classes, shape %v", d.Train.Len(), d.Test.Len(), d.Classes, d.Shape)
	}

	manifest := func(model string) error {
		_, err := manifests.Parse(
			"m.yaml",
			[]byte(
				"version: 1\nname: m\ntask: {dataset: "+name+model+"}\nrounds: 2\nlr: 0.1\nalgorithm: {name: d-sum}\n",
			),
		)
		return err
	}
	for _, model := range []string{"", ", model: cnn", ", model: mlp"} {
		if err := manifest(model); err != nil {
			t.Errorf("%s%s: %v", name, model, err)
		}
	}
	plan, _ := manifests.Parse(
		"m.yaml",
		[]byte("version: 1\nname: m\ntask: {dataset: "+name+"}\nrounds: 2\nlr: 0.1\nalgorithm: {name: d-sum}\n"),
	)
	if plan == nil || plan.Cells[0].Config.Task.Model != "lenet" {
		t.Errorf("%s's default model: want lenet, the entry's", name)
	}
	if err := manifest(", model: embedding-bag"); err == nil ||
		!strings.Contains(err.Error(), "embedding-bag reads text (token bags); "+name+" gives 1x28x28 images") {
		t.Errorf("%s with embedding-bag: %v", name, err)
	}
}

// TestAddRefusesWhatCannotWork: an entry without what loading or
// generating needs, or with both, is refused naming what it lacks.
func TestAddRefusesWhatCannotWork(t *testing.T) {
	noFiles := *kmnist
	noFiles.Name, noFiles.Files = "no-files", ""
	both := *kmnist
	both.Name, both.Generate = "both", datasets.NewSynthetic
	for _, tc := range []struct {
		info *datasets.Info
		want string
	}{
		{&datasets.Info{Name: "Upper", Model: "mlp", Generate: datasets.NewSynthetic}, "lower case"},
		{&datasets.Info{Name: "quadratic", Model: "mlp", Generate: datasets.NewSynthetic}, "not quadratic"},
		{&datasets.Info{Name: "no-model", Generate: datasets.NewSynthetic}, "name its model"},
		{&noFiles, "a file-based data set needs Load, Files"},
		{&both, "a generated data set (Generate) has no files"},
	} {
		if err := datasets.Add(tc.info); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.info.Name, err, tc.want)
		}
	}
}
