package manifests

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// HashOf is the manifest hash: sha256 of the canonical JSON of the
// normalised manifest and the schema version.
func HashOf(m Manifest) string {
	sum := sha256.Sum256(CanonicalJSON(struct {
		Schema   int      `json:"schema"`
		Manifest Manifest `json:"manifest"`
	}{SchemaVersion, m}))
	return hex.EncodeToString(sum[:])
}

// YAML is the normalised manifest as a manifest file: keys sorted,
// defaults written out. Opening it gives the same hash
// (TestYAMLRunsWithTheSameHash).
func YAML(m Manifest) []byte {
	tree, err := decodeNumbers(CanonicalJSON(m))
	if err != nil {
		panic(err)
	}
	out, err := yaml.Marshal(yamlNumbers(tree))
	if err != nil {
		panic(fmt.Sprintf("manifests: YAML: %v", err))
	}
	return out
}

// decodeNumbers decodes JSON with every number as written (json.Number):
// an integer above 2^53 keeps its digits, where float64 would round it
// (two seeds then shared a manifest hash).
func decodeNumbers(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	err := dec.Decode(&tree)
	return tree, err
}

// yamlNumbers is a decoded JSON tree with each number as YAML should
// write it: an integer as an integer at any size (a seed of 20240101,
// not 2.0240101e+07), any other number as its float64.
func yamlNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = yamlNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = yamlNumbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, err := x.Float64()
		if err != nil {
			panic(fmt.Sprintf("manifests: YAML: number %s: %v", x, err))
		}
		return f
	}
	return v
}

// CanonicalJSON encodes v with object keys sorted, no insignificant space
// and numbers in Go's shortest round-trip form.
func CanonicalJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("manifests: canonical JSON: %v", err))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		panic(err)
	}
	out, err := json.Marshal(tree)
	if err != nil {
		panic(err)
	}
	return out
}
