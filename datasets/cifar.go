package datasets

import (
	"fmt"
	"path/filepath"

	"github.com/ump-lab/ump/internal/bounded"
)

// cifarFiles are the files of the CIFAR-10 binary version.
var cifarFiles = []string{
	"data_batch_1.bin",
	"data_batch_2.bin",
	"data_batch_3.bin",
	"data_batch_4.bin",
	"data_batch_5.bin",
	"test_batch.bin",
}

// cifarRecord is one record: a label byte, then 32x32 red, green and blue
// planes.
const cifarRecord = 1 + 3*32*32

// loadCIFAR10 reads the binary version: data_batch_1..5.bin are the
// training split, test_batch.bin the test split.
func loadCIFAR10(dir string) (*Dataset, error) {
	d := &Dataset{Classes: 10, Shape: []int{3, 32, 32}}
	for k, name := range cifarFiles {
		split := &d.Train
		if k == len(cifarFiles)-1 {
			split = &d.Test
		}
		path := filepath.Join(dir, name)
		data, err := bounded.ReadFile(path, maxDataFile)
		if err != nil {
			return nil, err
		}
		if len(data) == 0 || len(data)%cifarRecord != 0 {
			return nil, fmt.Errorf(
				"%s: %d bytes is not a whole number of %d-byte records (truncated?)",
				path,
				len(data),
				cifarRecord,
			)
		}
		for off := 0; off < len(data); off += cifarRecord {
			label := data[off]
			if label > 9 {
				return nil, fmt.Errorf("%s: record %d has label %d, want 0..9", path, off/cifarRecord, label)
			}
			split.Labels = append(split.Labels, int32(label))
			split.Pixels = append(split.Pixels, data[off+1:off+cifarRecord]...)
		}
	}
	return d, nil
}
