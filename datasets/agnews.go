package datasets

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ump-lab/ump/internal/bounded"
)

// loadAGNews reads the official train.csv and test.csv (rows: class 1-4,
// title, description). A document is its title and description tokenized
// by Tokenize; the vocabulary is built from the training split only
// (Vocabulary) and test words outside it become <unk> (id 0).
func loadAGNews(dir string) (*Dataset, error) {
	d := &Dataset{Classes: 4}
	var docs [2][][]string
	for k, name := range []string{"train.csv", "test.csv"} {
		path := filepath.Join(dir, name)
		labels, texts, err := readAGNewsCSV(path)
		if err != nil {
			return nil, err
		}
		split := &d.Train
		if k == 1 {
			split = &d.Test
		}
		split.Labels = labels
		for _, t := range texts {
			docs[k] = append(docs[k], Tokenize(t))
		}
	}
	d.Vocab = Vocabulary(docs[0])
	ids := make(map[string]int32, len(d.Vocab))
	for i, w := range d.Vocab {
		ids[w] = int32(i)
	}
	for k, split := range []*Split{&d.Train, &d.Test} {
		split.Offsets = make([]int64, 0, len(docs[k])+1)
		split.Offsets = append(split.Offsets, 0)
		for _, doc := range docs[k] {
			for _, w := range doc {
				split.Tokens = append(split.Tokens, ids[w]) // absent words map to 0, <unk>
			}
			split.Offsets = append(split.Offsets, int64(len(split.Tokens)))
		}
	}
	return d, nil
}

func readAGNewsCSV(path string) (labels []int32, texts []string, err error) {
	data, err := bounded.ReadFile(path, maxDataFile)
	if err != nil {
		return nil, nil, err
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = 3
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w (want rows of: class 1-4, title, description)", path, err)
		}
		class, cerr := strconv.Atoi(rec[0])
		if cerr != nil || class < 1 || class > 4 {
			line, _ := r.FieldPos(0)
			return nil, nil, fmt.Errorf("%s:%d: class %q is not one of 1, 2, 3, 4", path, line, rec[0])
		}
		labels = append(labels, int32(class-1))
		texts = append(texts, rec[1]+" "+rec[2])
	}
	if len(labels) == 0 {
		return nil, nil, fmt.Errorf("%s: no rows", path)
	}
	return labels, texts, nil
}

// tokenReplacer implements torchtext's basic_english normalisation:
// punctuation . , ( ) ! ? and ' become tokens, double quotes vanish, ; and
// : and <br /> become spaces.
var tokenReplacer = strings.NewReplacer(
	"'", " ' ", `"`, "", ".", " . ", "<br />", " ", ",", " , ", "(", " ( ", ")", " ) ",
	"!", " ! ", "?", " ? ", ";", " ", ":", " ")

// Tokenize lowercases a text and splits it into words and punctuation as
// torchtext's basic_english tokenizer does.
func Tokenize(text string) []string {
	return strings.Fields(tokenReplacer.Replace(strings.ToLower(text)))
}

// Vocabulary returns "<unk>" followed by every word of docs, most frequent
// first, ties in lexical order.
func Vocabulary(docs [][]string) []string {
	counts := map[string]int{}
	for _, doc := range docs {
		for _, w := range doc {
			counts[w]++
		}
	}
	delete(counts, "<unk>")
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if counts[words[i]] != counts[words[j]] {
			return counts[words[i]] > counts[words[j]]
		}
		return words[i] < words[j]
	})
	return append([]string{"<unk>"}, words...)
}
