package manifests

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/ump-lab/ump/kinds"
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
		return nil, &Error{
			Problems: []string{fmt.Sprintf("%s: no such file, and no embedded manifest of that name%s (embedded: %s)",
				nameOrPath, suggestEmbedded(strings.TrimSuffix(nameOrPath, ".yaml")), strings.Join(Embedded(), ", "))},
		}
	}
	return Parse("embedded:"+name, data, overrides...)
}

// suggestEmbedded is " (did you mean …?)" for the embedded manifest whose
// name, or whose name without its folder (table1-mnist for
// paper/table1-mnist), is closest to name; "" when none is close.
func suggestEmbedded(name string) string {
	names := Embedded()
	if s := kinds.DidYouMean(name, names); s != "" {
		return s
	}
	bases := make([]string, len(names))
	for i, n := range names {
		bases[i] = path.Base(n)
	}
	base, ok := kinds.Closest(name, bases)
	if slices.Contains(bases, name) {
		base, ok = name, true
	}
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", names[slices.Index(bases, base)])
}

// EmbeddedOf is the embedded manifest that, with overrides, is the plan of
// that hash, and whether there is one: the name `ump run` takes to run it
// again.
func EmbeddedOf(hash string, overrides []string) (string, bool) {
	for _, name := range Embedded() {
		if p, err := Open(name, overrides...); err == nil && p.Hash == hash {
			return name, true
		}
	}
	return "", false
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
// (published.yaml; read by published.Parse).
//
//go:embed published.yaml
var Published []byte
