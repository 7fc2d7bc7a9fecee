package datasets

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ump-lab/ump/internal/bounded"
)

// writeIDX writes an IDX file of unsigned bytes, gzipped when the name
// ends in .gz.
func writeIDX(t *testing.T, path string, magic uint32, dims []int, data []byte) {
	t.Helper()
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(data)
	out := b.Bytes()
	if strings.HasSuffix(path, ".gz") {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(out)
		zw.Close()
		out = z.Bytes()
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// realDir returns the data directory holding name, or skips.
func realDir(t *testing.T, name string) string {
	t.Helper()
	dir := DefaultDir()
	info, _ := Lookup(name)
	if !info.Installed(dir) {
		t.Skipf("%s is not installed in %s (run `ump data fetch %s`; .ci/run installs it)", name, dir, name)
	}
	return dir
}

func TestRealMNISTAndFashion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		counts []int // training samples per class, as published
	}{
		{"mnist", []int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}},
		{"fashion-mnist", []int{6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := realDir(t, tc.name)
			info, _ := Lookup(tc.name)
			if err := info.verify(filepath.Join(dir, tc.name)); err != nil {
				t.Fatal(err)
			}
			d, err := NewLibrary(dir).Load(tc.name, Synthetic{})
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Train.ClassCounts(10); !slices.Equal(got, tc.counts) {
				t.Errorf("class counts %v, want %v", got, tc.counts)
			}
			if len(d.Train.Pixels) != 60000*784 || len(d.Test.Pixels) != 10000*784 {
				t.Errorf("pixel buffers %d and %d", len(d.Train.Pixels), len(d.Test.Pixels))
			}
		})
	}
}

// emnistFiles writes a tiny EMNIST split whose image k is transposed in
// the file, as in the official files: pixel (row r, col c) of the upright
// image is at offset c*28+r.
func emnistFiles(t *testing.T, dir, split string, labels []byte, gz bool) [][]byte {
	t.Helper()
	suffix := ""
	if gz {
		suffix = ".gz"
	}
	var upright [][]byte
	var stored []byte
	for k := range labels {
		img := make([]byte, 784)
		for i := range img {
			img[i] = byte(i*7 + k)
		}
		upright = append(upright, img)
		tr := make([]byte, 784)
		for r := 0; r < 28; r++ {
			for c := 0; c < 28; c++ {
				tr[c*28+r] = img[r*28+c]
			}
		}
		stored = append(stored, tr...)
	}
	for _, part := range []string{"train", "test"} {
		prefix := filepath.Join(dir, "emnist-"+split+"-"+part)
		writeIDX(t, prefix+"-images-idx3-ubyte"+suffix, idxImages, []int{len(labels), 28, 28}, stored)
		writeIDX(t, prefix+"-labels-idx1-ubyte"+suffix, idxLabels, []int{len(labels)}, labels)
	}
	return upright
}

func TestEMNISTUprightAndLabels(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "emnist-letters")
	os.Mkdir(dir, 0o755)
	upright := emnistFiles(t, dir, "letters", []byte{1, 26, 5}, true)
	d, err := NewLibrary(root).Load("emnist-letters", Synthetic{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Train.Labels, []int32{0, 25, 4}) {
		t.Errorf("letters labels %v, want 1-based file labels shifted to 0..25", d.Train.Labels)
	}
	for k, img := range upright {
		if !bytes.Equal(d.Train.Pixels[k*784:(k+1)*784], img) {
			t.Fatalf("image %d is not upright", k)
		}
	}
	// The same content, plain instead of gzipped, has the same digest.
	plainRoot := t.TempDir()
	plain := filepath.Join(plainRoot, "emnist-letters")
	os.Mkdir(plain, 0o755)
	emnistFiles(t, plain, "letters", []byte{1, 26, 5}, false)
	d2, err := NewLibrary(plainRoot).Load("emnist-letters", Synthetic{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Digest != d2.Digest {
		t.Errorf("gzipped and plain files give digests %s and %s", d.Digest, d2.Digest)
	}
	// byclass has 62 classes; a label of 62 is out of range.
	bad := filepath.Join(root, "emnist-byclass")
	os.Mkdir(bad, 0o755)
	emnistFiles(t, bad, "byclass", []byte{61, 62}, false)
	_, err = NewLibrary(root).Load("emnist-byclass", Synthetic{})
	if err == nil ||
		!strings.Contains(
			err.Error(),
			"emnist-byclass-train-labels-idx1-ubyte: label 62 of sample 1 is outside 0..61",
		) {
		t.Errorf("out-of-range label: got %v", err)
	}
}

func TestIDXErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, dir string)
		want  string
	}{
		{"wrong magic", func(t *testing.T, dir string) {
			writeIDX(t, filepath.Join(dir, "train-images-idx3-ubyte"), idxLabels, []int{1}, []byte{0})
		}, "train-images-idx3-ubyte: wrong magic number 0x00000801, want 0x00000803"},
		{"truncated", func(t *testing.T, dir string) {
			writeIDX(t, filepath.Join(dir, "train-images-idx3-ubyte"), idxImages, []int{2, 28, 28}, make([]byte, 784+
				100))
		}, "train-images-idx3-ubyte: truncated or padded: 884 data bytes, dimensions [2 28 28] need 1568"},
		{"count mismatch", func(t *testing.T, dir string) {
			writeIDX(t, filepath.Join(dir, "train-images-idx3-ubyte"), idxImages, []int{2, 28, 28}, make([]byte, 2*784))
			writeIDX(t, filepath.Join(dir, "train-labels-idx1-ubyte"), idxLabels, []int{3}, []byte{1, 2, 3})
		}, "has 2 images but"},
		{"missing", func(t *testing.T, dir string) {}, "neither train-images-idx3-ubyte nor " +
			"train-images-idx3-ubyte.gz exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "mnist")
			os.Mkdir(dir, 0o755)
			tc.write(t, dir)
			_, err := NewLibrary(root).Load("mnist", Synthetic{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestDataFilesAreReadAsPlainFiles: a data file that is a link to a
// device, or a FIFO, is refused at once (bounded.ErrNotRegular) for every
// format, instead of read until memory runs out or waited on for ever.
func TestDataFilesAreReadAsPlainFiles(t *testing.T) {
	for _, c := range []struct{ name, file string }{
		{"mnist", "train-images-idx3-ubyte"}, {"cifar10", cifarFiles[0]}, {"agnews", "train.csv"},
	} {
		for what, plant := range map[string]func(path string) error{
			"a link to /dev/zero": func(path string) error { return os.Symlink("/dev/zero", path) },
			"a FIFO":              func(path string) error { return syscall.Mkfifo(path, 0o644) },
		} {
			root := t.TempDir()
			dir := filepath.Join(root, c.name)
			os.Mkdir(dir, 0o755)
			if err := plant(filepath.Join(dir, c.file)); err != nil {
				t.Fatal(err)
			}
			if _, err := NewLibrary(root).Load(c.name, Synthetic{}); !errors.Is(err, bounded.ErrNotRegular) ||
				!strings.Contains(err.Error(), c.file) {
				t.Errorf("%s's %s %s: %v; want it refused as not a plain file, named", c.name, c.file, what, err)
			}
		}
	}
}

// cifarBatch builds records: label, then red, green, blue planes whose
// bytes encode (record, channel, pixel).
func cifarBatch(labels []byte) []byte {
	var out []byte
	for k, l := range labels {
		out = append(out, l)
		for ch := 0; ch < 3; ch++ {
			for p := 0; p < 1024; p++ {
				out = append(out, byte(k*31+ch*7+p))
			}
		}
	}
	return out
}

// cifarFixture writes CIFAR-10's files, two records each, in a data
// directory, and returns it and the data set's directory.
func cifarFixture(t *testing.T) (root, dir string) {
	root = t.TempDir()
	dir = filepath.Join(root, "cifar10")
	os.Mkdir(dir, 0o755)
	for i, name := range cifarFiles {
		os.WriteFile(filepath.Join(dir, name), cifarBatch([]byte{byte(i), 9}), 0o644)
	}
	return root, dir
}

func TestCIFAR10(t *testing.T) {
	root, dir := cifarFixture(t)
	d, err := NewLibrary(root).Load("cifar10", Synthetic{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.Len() != 10 || d.Test.Len() != 2 || !slices.Equal(d.Test.Labels, []int32{5, 9}) {
		t.Fatalf("train %d test %d labels %v", d.Train.Len(), d.Test.Len(), d.Test.Labels)
	}
	// Sample 3 of the training split is record 1 of data_batch_2: its green
	// pixel 10 is at channel-major offset 1024+10.
	if got, want := d.Train.Pixels[3*3072+1024+10], byte(1*31+1*7+10); got != want {
		t.Errorf("pixel layout: got %d, want %d", got, want)
	}
	os.WriteFile(filepath.Join(dir, "test_batch.bin"), cifarBatch([]byte{1})[:3000], 0o644)
	_, err = NewLibrary(root).Load("cifar10", Synthetic{})
	if err == nil ||
		!strings.Contains(err.Error(), "test_batch.bin: 3000 bytes is not a whole number of 3073-byte records") {
		t.Errorf("truncated file: got %v", err)
	}
	os.WriteFile(filepath.Join(dir, "test_batch.bin"), cifarBatch([]byte{10}), 0o644)
	_, err = NewLibrary(root).Load("cifar10", Synthetic{})
	if err == nil || !strings.Contains(err.Error(), "record 0 has label 10") {
		t.Errorf("bad label: got %v", err)
	}
}

func TestAGNews(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "agnews")
	os.Mkdir(dir, 0o755)
	train := `"3","Wall St. Bears Claw Back","Reuters - Short-sellers, Wall Street's ""dwindling"" band."
"1","Oil prices (soar)","Oil, again!"
`
	test := `"2","Wall street zebras","unseen words?"
`
	os.WriteFile(filepath.Join(dir, "train.csv"), []byte(train), 0o644)
	os.WriteFile(filepath.Join(dir, "test.csv"), []byte(test), 0o644)
	d, err := NewLibrary(root).Load("agnews", Synthetic{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Train.Labels, []int32{2, 0}) || !slices.Equal(d.Test.Labels, []int32{1}) {
		t.Errorf("labels %v %v", d.Train.Labels, d.Test.Labels)
	}
	if got := Tokenize(`Wall St. Bears "Claw", (Back)!`); !slices.Equal(
		got,
		[]string{"wall", "st", ".", "bears", "claw", ",", "(", "back", ")", "!"},
	) {
		t.Errorf("Tokenize: %q", got)
	}
	if want := []string{"<unk>", ",", ".", "oil", "wall"}; !slices.Equal(d.Vocab[:5], want) {
		t.Errorf("vocabulary starts %q; want %q: <unk>, then by frequency, ties in lexical order", d.Vocab[:5], want)
	}
	words := func(s *Split, i int) []string {
		var out []string
		for _, id := range s.Tokens[s.Offsets[i]:s.Offsets[i+1]] {
			out = append(out, d.Vocab[id])
		}
		return out
	}
	if got := words(&d.Test, 0); !slices.Equal(got, []string{"wall", "street", "<unk>", "<unk>", "<unk>", "<unk>"}) {
		t.Errorf("test document: %q (the vocabulary comes from the training split only)", got)
	}
	os.WriteFile(filepath.Join(dir, "test.csv"), []byte(test+`"5","bad","class"`+"\n"), 0o644)
	_, err = NewLibrary(root).Load("agnews", Synthetic{})
	if err == nil || !strings.Contains(err.Error(), `test.csv:2: class "5" is not one of 1, 2, 3, 4`) {
		t.Errorf("bad class: got %v", err)
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	s := Synthetic{Dims: 5, Classes: 3, Train: 50, Test: 20, Separation: 1}
	a, err := NewLibrary("").Load("synthetic", s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSynthetic(s)
	if a.Digest != b.digest() || a.Train.Len() != 50 || len(a.Test.Features) != 100 {
		t.Errorf("synthetic task not reproducible or misshapen")
	}
	s.Separation = 2
	c, _ := NewLibrary("").Load("synthetic", s)
	if c.Digest == a.Digest {
		t.Errorf("different parameters gave the same digest")
	}
}

// failing is a source that cannot deliver; badFiles delivers garbage.
type failing struct{}

func (failing) Describe() string                    { return "an unreachable mirror" }
func (failing) Fetch(context.Context, string) error { return os.ErrNotExist }

type badFiles struct{}

func (badFiles) Describe() string { return "a mirror with broken files" }
func (badFiles) Fetch(_ context.Context, dst string) error {
	for _, f := range idxNames("", "") {
		os.WriteFile(filepath.Join(dst, f), []byte("garbage"), 0o644)
	}
	return nil
}

func TestFetchFallsThroughAndLeavesNothing(t *testing.T) {
	orig := catalog["mnist"]
	t.Cleanup(func() { catalog["mnist"] = orig })
	info := *orig
	info.From = []Source{failing{}, badFiles{}}
	catalog["mnist"] = &info
	dir := t.TempDir()
	var log bytes.Buffer
	err := Fetch(context.Background(), dir, "mnist", &log)
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("fetch from broken sources: %v; want ErrUnreachable (exit 3)", err)
	}
	for _, want := range []string{"an unreachable mirror: file does not exist", "a mirror with broken files: ",
		"sha256", "to install it by hand, put train-images-idx3-ubyte"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("fetch left %d entries behind in the data directory", len(entries))
	}
}

// TestHandInstallNamesTheDataSetsOwnFiles: the hint for installing a data
// set by hand names its files, and speaks of gzipped IDX files only for the
// data sets that have them (not CIFAR-10's .bin batches or AG NEWS' CSV).
func TestHandInstallNamesTheDataSetsOwnFiles(t *testing.T) {
	for name, gz := range map[string]bool{"mnist": true, "emnist-digits": true, "fashion-mnist": true,
		"cifar10": false, "agnews": false} {
		info, _ := Lookup(name)
		hint := info.handInstall("/data/" + name)
		if !strings.Contains(hint, info.Files) || strings.Contains(hint, "gzipped") != gz ||
			strings.Contains(hint, "ubyte") && !gz {
			t.Errorf("%s: %q", name, hint)
		}
	}
}

// TestLoadHoldsTheCatalogueToItsShape: a data set whose files hold
// samples of another shape than its entry declares (which manifests pair
// models by) is refused when it loads.
func TestLoadHoldsTheCatalogueToItsShape(t *testing.T) {
	root, _ := cifarFixture(t)
	declared := catalog["cifar10"].Shape
	catalog["cifar10"].Shape = []int{1, 28, 28}
	t.Cleanup(func() { catalog["cifar10"].Shape = declared })
	_, err := NewLibrary(root).Load("cifar10", Synthetic{})
	if err == nil ||
		!strings.Contains(
			err.Error(),
			"data set cifar10: its files hold samples of shape [3 32 32]; the catalogue declares [1 28 28]",
		) {
		t.Errorf("got %v; want the declared shape refused", err)
	}
}
