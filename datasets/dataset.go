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
	"slices"
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

// Load returns the named data set of the catalogue: its files from the
// data directory, or, for a generated one, the data set synth
// parameterises (ignored otherwise).
func (l *Library) Load(name string, synth Synthetic) (*Dataset, error) {
	info, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown data set %q; known: %s", name, strings.Join(Names(), ", "))
	}
	key := name
	if info.Generate != nil {
		key = fmt.Sprintf("%s%+v", name, synth)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if d, ok := l.loaded[key]; ok {
		return d, nil
	}
	var d *Dataset
	var err error
	if info.Generate != nil {
		if d, err = info.Generate(synth); err != nil {
			return nil, err
		}
	} else if d, err = l.loadFiles(info); err != nil {
		return nil, err
	}
	d.Name = name
	d.Digest = d.digest()
	l.loaded[key] = d
	return d, nil
}

// loadFiles loads a file-based data set from the data directory, holding
// it to its declared shape.
func (l *Library) loadFiles(info *Info) (*Dataset, error) {
	dir := filepath.Join(l.Dir, info.Name)
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%w: %s is not in %s: run `ump data fetch %s` (or place the files by hand: %s)",
			ErrNotInstalled, info.Name, dir, info.Name, info.Files)
	}
	d, err := info.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("data set %s: %w", info.Name, err)
	}
	if !slices.Equal(d.Shape, info.Shape) {
		return nil, fmt.Errorf(
			"data set %s: its files hold samples of shape %v; the catalogue declares %v",
			info.Name,
			d.Shape,
			info.Shape,
		)
	}
	return d, nil
}

// Info is a data set of the catalogue (docs/adding-a-dataset.md): read
// from files in the data directory (Load), or generated from a
// manifest's parameters (Generate).
type Info struct {
	Name    string
	Classes int // 0 for a generated data set: its parameters say
	// Shape is one sample's input shape, as Dataset.Shape: [C, H, W] for
	// images, [D] for vectors, nil for text (and for a generated data set,
	// whose parameters give it). A manifest pairs the data set with a model
	// by it (manifests.Model.Reads); loading the files checks it.
	Shape       []int
	Model       string // the paper's model for it, its default (manifests.Models)
	Description string
	// Files are the files expected in the data set's directory, as ump
	// data list and the errors name them ("" for a generated data set).
	Files string
	// Load reads the files from the data set's directory.
	Load func(dir string) (*Dataset, error)
	// From are where ump data fetch takes the files from, tried in order.
	From []Source
	// Expect is the number of training and test samples of the official
	// files, which a fetch verifies.
	Expect [2]int
	// Generate builds a generated data set from its parameters (the
	// manifest's task.synthetic block); nil for a file-based one.
	Generate func(Synthetic) (*Dataset, error)
}

// TrainSamples is the number of samples of the official training split.
func (i *Info) TrainSamples() int { return i.Expect[0] }
