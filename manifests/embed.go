package manifests

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

//go:embed quickstart.yaml examples/*.yaml paper/*.yaml
var embedded embed.FS

// Open parses a manifest file, or, when no such file exists, the embedded
// manifest of that name (e.g. "quickstart"), with overrides applied
// (Parse).
func Open(nameOrPath string, overrides ...string) (*Plan, error) {
	if _, err := os.Stat(nameOrPath); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return Load(nameOrPath, overrides...)
	}
	name := strings.TrimSuffix(nameOrPath, ".yaml") + ".yaml"
	data, err := embedded.ReadFile(name)
	if err != nil {
		return nil, &Error{Problems: []string{fmt.Sprintf("%s: no such file, and no embedded manifest of that name (embedded: %s)",
			nameOrPath, strings.Join(Embedded(), ", "))}}
	}
	return Parse("embedded:"+name, data, overrides...)
}

// Embedded lists the names of the embedded manifests.
func Embedded() []string {
	var names []string
	fs.WalkDir(embedded, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, strings.TrimSuffix(p, path.Ext(p)))
		}
		return nil
	})
	sort.Strings(names)
	return names
}

// Published is the paper's published results and claims, as data
// (published.yaml; read by report.ParsePublished).
//
//go:embed published.yaml
var Published []byte
