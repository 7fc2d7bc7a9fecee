package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ump-lab/ump/internal/bounded"
)

// IDX magic numbers: unsigned bytes with 3 dimensions (images) or 1
// (labels).
const (
	idxImages = 0x00000803
	idxLabels = 0x00000801
)

// emnistSplits are the EMNIST splits: classes, the first label in the
// files (letters count from 1) and the official sample counts.
var emnistSplits = []struct {
	split     string
	classes   int
	labelBase int32
	expect    [2]int
}{
	{"byclass", 62, 0, [2]int{697932, 116323}},
	{"bymerge", 47, 0, [2]int{697932, 116323}},
	{"balanced", 47, 0, [2]int{112800, 18800}},
	{"letters", 26, 1, [2]int{124800, 20800}},
	{"digits", 10, 0, [2]int{240000, 40000}},
	{"mnist", 10, 0, [2]int{60000, 10000}},
}

// idxNames lists the four IDX file names of a data set.
func idxNames(prefix, suffix string) []string {
	var out []string
	for _, split := range []string{"train", "t10k"} {
		if prefix != "" && split == "t10k" {
			split = "test" // EMNIST names its test files "test"
		}
		out = append(out, prefix+split+"-images-idx3-ubyte"+suffix, prefix+split+"-labels-idx1-ubyte"+suffix)
	}
	return out
}

func idxFiles(prefix string) string { return strings.Join(idxNames(prefix, ""), ", ") }

// findFile returns the path of name or name.gz in dir.
func findFile(dir, name string) (string, error) {
	for _, p := range []string{filepath.Join(dir, name), filepath.Join(dir, name+".gz")} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: neither %s nor %s.gz exists", dir, name, name)
}

// maxDataFile bounds each data file ump reads (and a gzipped one
// unpacked): EMNIST's largest, byclass's training images, is 547 MB.
const maxDataFile = 2 << 30

// readMaybeGzip reads a whole file, decompressing it when it is gzipped;
// a file that is not a plain one, or holds more than maxDataFile bytes
// (unpacked), is refused before it is read whole.
func readMaybeGzip(path string) ([]byte, error) {
	data, err := bounded.ReadFile(path, maxDataFile)
	if err != nil {
		return nil, err
	}
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out bytes.Buffer
	switch err := unpackBounded(&out, zr); {
	case errors.Is(err, bounded.ErrTooLarge):
		return nil, fmt.Errorf("%s: %w", path, err)
	case err != nil:
		return nil, fmt.Errorf("%s: corrupt gzip data (truncated download?): %w", path, err)
	}
	return out.Bytes(), nil
}

// unpackBounded copies r (a gzip stream, an archive's member, which may
// unpack to any size) to w, and refuses more than maxDataFile bytes.
func unpackBounded(w io.Writer, r io.Reader) error {
	n, err := io.Copy(w, io.LimitReader(r, maxDataFile+1))
	if err == nil && n > maxDataFile {
		err = fmt.Errorf("%w: it unpacks to more than the %d bytes a data file holds", bounded.ErrTooLarge, maxDataFile)
	}
	return err
}

// readIDX parses an IDX file of unsigned bytes with the given magic and
// returns its dimensions and data.
func readIDX(path string, magic uint32) (dims []int, data []byte, err error) {
	raw, err := readMaybeGzip(path)
	if err != nil {
		return nil, nil, err
	}
	if len(raw) < 4 {
		return nil, nil, fmt.Errorf("%s: truncated: %d bytes, too short for an IDX header", path, len(raw))
	}
	if got := binary.BigEndian.Uint32(raw); got != magic {
		return nil, nil, fmt.Errorf("%s: wrong magic number 0x%08x, want 0x%08x (not an IDX %s file)",
			path, got, magic, map[uint32]string{idxImages: "image", idxLabels: "label"}[magic])
	}
	nd := int(magic & 0xff)
	header := 4 + 4*nd
	if len(raw) < header {
		return nil, nil, fmt.Errorf("%s: truncated: %d bytes, header needs %d", path, len(raw), header)
	}
	size := 1
	for k := 0; k < nd; k++ {
		d := int(binary.BigEndian.Uint32(raw[4+4*k:]))
		dims = append(dims, d)
		size *= d
	}
	if len(raw)-header != size {
		return nil, nil, fmt.Errorf(
			"%s: truncated or padded: %d data bytes, dimensions %v need %d",
			path,
			len(raw)-header,
			dims,
			size,
		)
	}
	return dims, raw[header:], nil
}

// LoadIDX loads MNIST-style IDX files prefix{train,t10k|test}-... from
// dir. transpose turns EMNIST's column-major images upright; labelBase is
// subtracted from the labels.
func LoadIDX(dir, prefix string, classes int, transpose bool, labelBase int32) (*Dataset, error) {
	names := idxNames(prefix, "")
	d := &Dataset{Classes: classes, Shape: []int{1, 28, 28}}
	for k, split := range []*Split{&d.Train, &d.Test} {
		imgPath, err := findFile(dir, names[2*k])
		if err != nil {
			return nil, err
		}
		dims, pixels, err := readIDX(imgPath, idxImages)
		if err != nil {
			return nil, err
		}
		if dims[1] != 28 || dims[2] != 28 {
			return nil, fmt.Errorf("%s: images are %dx%d, want 28x28", imgPath, dims[1], dims[2])
		}
		lblPath, err := findFile(dir, names[2*k+1])
		if err != nil {
			return nil, err
		}
		ldims, labels, err := readIDX(lblPath, idxLabels)
		if err != nil {
			return nil, err
		}
		if ldims[0] != dims[0] {
			return nil, fmt.Errorf("%s has %d images but %s has %d labels", imgPath, dims[0], lblPath, ldims[0])
		}
		if transpose {
			transposeImages(pixels, 28)
		}
		split.Pixels = pixels
		split.Labels = make([]int32, len(labels))
		for i, l := range labels {
			v := int32(l) - labelBase
			if v < 0 || v >= int32(classes) {
				return nil, fmt.Errorf(
					"%s: label %d of sample %d is outside %d..%d",
					lblPath,
					l,
					i,
					labelBase,
					int32(classes)-1+labelBase,
				)
			}
			split.Labels[i] = v
		}
	}
	return d, nil
}

// transposeImages transposes each side x side image in place.
func transposeImages(pixels []byte, side int) {
	n := side * side
	for off := 0; off+n <= len(pixels); off += n {
		img := pixels[off : off+n]
		for r := 0; r < side; r++ {
			for c := r + 1; c < side; c++ {
				img[r*side+c], img[c*side+r] = img[c*side+r], img[r*side+c]
			}
		}
	}
}
