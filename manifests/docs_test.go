package manifests

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ump-lab/ump/kinds"
)

// docTables returns the Markdown tables of docs/manifests.md that have a
// "parameters" column: each row's first-column name (backquotes and notes
// dropped) mapped to its parameters cell.
func docTables(doc string) []map[string]string {
	name := regexp.MustCompile("^`([a-z0-9-]+)`")
	var tables []map[string]string
	var cur map[string]string
	column := -1
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "|") {
			cur, column = nil, -1
			continue
		}
		cells := strings.Split(strings.ReplaceAll(strings.Trim(line, "|"), `\|`, "/"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cur == nil {
			if column = slices.IndexFunc(cells, func(c string) bool {
				return strings.HasPrefix(c,
					"parameters")
			}); column >= 0 {
				cur = map[string]string{}
				tables = append(tables, cur)
			}
			continue
		}
		if m := name.FindStringSubmatch(cells[0]); m != nil && column < len(cells) {
			cur[m[1]] = cells[column]
		}
	}
	return tables
}

// defaultText is how docs/manifests.md writes a parameter's default.
func defaultText(p kinds.Param) string {
	switch {
	case p.Required != "":
		return "(required"
	case p.DefaultOf != nil:
		return "(="
	}
	if f, ok := p.Default.(float64); ok {
		return "(" + strconv.FormatFloat(f, 'g', -1, 64) + ")"
	}
	return fmt.Sprintf("(%v)", p.Default)
}

// TestManifestsDocTablesMatchTheDeclarations checks the tables of docs/manifests.md of
// algorithms, codecs, partitions and topologies against the kinds the
// packages declare: one row per kind and no other, each parameter in its
// kind's row with its default. A parameter every kind with parameters
// takes (memory, gamma, weights) is documented once beside its table.
func TestManifestsDocTablesMatchTheDeclarations(t *testing.T) {
	data, err := os.ReadFile("../docs/manifests.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	tables := docTables(doc)
	families := []*kinds.Schema{(&Algorithm{}).family(), (&Compression{}).family(), (&Partition{}).family(),
		(&Topology{}).family()}
	for _, fam := range families {
		names := fam.Names()
		i := slices.IndexFunc(tables, func(tab map[string]string) bool { _, ok := tab[names[0]]; return ok })
		if i < 0 {
			t.Errorf("docs/manifests.md: no table with a row for %s %q", fam.Field, names[0])
			continue
		}
		table := tables[i]
		for row := range table {
			if !slices.Contains(names, row) {
				t.Errorf("docs/manifests.md: the %s table has a row %q, which is not declared", fam.Field, row)
			}
		}
		for _, p := range fam.Params() {
			if shared(fam, p.Name) && !strings.Contains(doc, "`"+p.Name+"`") {
				t.Errorf(
					"docs/manifests.md: %s's parameter %s, which every kind with parameters takes, is not documented",
					fam.Field,
					p.Name,
				)
			}
		}
		for _, k := range fam.Kinds {
			row, ok := table[k.Name]
			if !ok {
				t.Errorf("docs/manifests.md: the %s table has no row for %q", fam.Field, k.Name)
				continue
			}
			for _, p := range k.Params {
				if shared(fam, p.Name) {
					continue
				}
				at := strings.Index(row, "`"+p.Name)
				if at < 0 {
					t.Errorf(
						"docs/manifests.md: the row of %s %q does not list its parameter %s",
						fam.Field,
						k.Name,
						p.Name,
					)
					continue
				}
				seg := row[at:]
				if next := strings.Index(seg, ", `"); next >= 0 {
					seg = seg[:next]
				}
				if want := defaultText(p); !strings.Contains(seg, want) {
					t.Errorf(
						"docs/manifests.md: %s %q: %s is written %q; its default reads %q",
						fam.Field,
						k.Name,
						p.Name,
						seg,
						want,
					)
				}
			}
		}
	}
}

// shared reports a parameter that every kind with parameters takes.
func shared(fam *kinds.Schema, name string) bool {
	for _, k := range fam.Kinds {
		if _, ok := k.Param(name); !ok && len(k.Params) > 0 {
			return false
		}
	}
	return true
}
