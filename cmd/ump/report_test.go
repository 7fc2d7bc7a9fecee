package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ump-lab/ump/artifacts"
	"github.com/ump-lab/ump/manifests"
	"github.com/ump-lab/ump/report/resultsdir"
	"github.com/ump-lab/ump/signing"
	"github.com/ump-lab/ump/state"
)

// TestReportFromTheStoreAndFromItsResults: ump report writes a manifest's
// table (the one ump table prints from the store's blobs, here laid out
// from the exports), its figures as PNG and PDF, the commands and hashes
// and the exports; from the directory it wrote, without a store, it
// writes the same report again; an edited or incomplete directory is
// refused with exit 2, naming the file.
func TestReportFromTheStoreAndFromItsResults(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	testKey(t) // signing as a user with a key does (the other tests may make it first)
	run := ump(t, store, "run", writeFile(t, "m.yaml", tableManifest))
	hash := hashOf(t, run)
	out := filepath.Join(t.TempDir(), "report")
	r := ump(t, store, "report", hash[:8], "--out", out)
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	doc, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	table := ump(t, store, "table", hash)
	if table.code != 0 || !strings.Contains(string(doc), "### Table\n\n"+table.stdout) {
		t.Errorf("the report's table is not ump table's:\n%s\nump table printed:\n%s", doc, table.stdout)
	}
	runIt := "ump run quad-table-" + hash[:12] + "/manifest.yaml"
	version := strings.TrimSpace(strings.TrimPrefix(ump(t, store, "--version").stdout, "ump version "))
	for _, want := range []string{"## quad-table\n", "| computed by | " + version + " (36 cells) |", "| " +
		"manifest | `" + hash + "` |", "| run it | `" + runIt + "` (from this report's directory) |",
		"`ump verify " + hash[:12] + "`", "| cells | 36: ", "![quad-table: topology.kind = full]("} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("report.md lacks %q:\n%s", want, doc)
		}
	}
	dir := filepath.Join(out, "quad-table-"+hash[:12])
	magic := map[string]string{
		".png":     "\x89PNG",
		".pdf":     "%PDF",
		".parquet": "PAR1",
		".json":    "{",
		".csv":     "manifest,",
		".gz":      "\x1f\x8b",
	}
	for _, name := range []string{"registration.json", "final.parquet", "rounds.parquet", "final.csv", "rounds.csv.gz",
		"curves-1-topology.kind=ring.png", "curves-1-topology.kind=ring.pdf", "curves-2-topology.kind=full.png",
		"curves-2-topology.kind=full.pdf",
		"sweep-topology.kind.png", "sweep-topology.kind.pdf"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if m := magic[filepath.Ext(name)]; !bytes.HasPrefix(data, []byte(m)) {
			t.Errorf("%s does not start with %q", name, m)
		}
		if !strings.Contains(string(doc), "quad-table-"+hash[:12]+"/"+name) {
			t.Errorf("report.md does not link %s", name)
		}
	}
	// The run-it line, pasted in the report's directory: the same manifest,
	// every cell a cache hit.
	if r := pasted(t, out, strings.Replace(runIt, "ump ", "ump --store "+store+" ", 1)); r.code != 0 ||
		hashOf(t, r) != hash ||
		!strings.Contains(r.stderr, "(36 fully cached)") {
		t.Errorf("%s: exit %d\n%s", runIt, r.code, r.stderr)
	}
	export := ump(t, store, "export", "--manifest", hash, "--table", "final", "--out", "-")
	if final, _ := os.ReadFile(filepath.Join(dir, "final.csv")); export.code != 0 || string(final) != export.stdout {
		t.Errorf(
			"final.csv is not ump export's final table:\n%s\nexport (exit %d):\n%s",
			final,
			export.code,
			export.stdout,
		)
	}

	// From the results alone: the same report.
	again := filepath.Join(t.TempDir(), "again")
	r = ump(t, filepath.Join(t.TempDir(), "no-store"), "report", dir, "--out", again)
	if r.code != 0 {
		t.Fatalf("report from %s: exit %d\n%s", dir, r.code, r.stderr)
	}
	// (but for who vouches: the user, for results from the store, a key
	// the user trusts for the same read back; or no one, without a key)
	signedRow := regexp.MustCompile(`(?m)^\| results signed \| .*\n`)
	if doc2 := readDoc(t, again); signedRow.ReplaceAllString(doc2, "") != signedRow.ReplaceAllString(string(doc), "") {
		t.Errorf("the report from the results differs from the store's:\n%s\nwant:\n%s", doc2, doc)
	}

	// The same manifest twice (from the store and from its results).
	if r := ump(t, store, "report", hash[:12], dir, "--out", t.TempDir()); r.code != 2 ||
		!strings.Contains(r.stderr, "are the same manifest") {
		t.Errorf("the same manifest twice: exit %d, %q; want exit 2", r.code, r.stderr)
	}
	// Edited or incomplete results are refused.
	reg, _ := os.ReadFile(filepath.Join(dir, "registration.json"))
	edited := regexp.MustCompile(`"rounds": 15`).ReplaceAll(reg, []byte(`"rounds": 16`))
	if bytes.Equal(edited, reg) {
		t.Fatal("the registration holds no \"rounds\": 15 to edit")
	}
	if err := os.WriteFile(filepath.Join(dir, "registration.json"), edited, 0o644); err != nil {
		t.Fatal(err)
	}
	r = ump(t, store, "report", dir, "--out", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "registration.json") || !strings.Contains(r.stderr, "edited") {
		t.Errorf("an edited registration: exit %d, %s", r.code, r.stderr)
	}
	os.Remove(filepath.Join(dir, "registration.json"))
	r = ump(t, store, "report", dir, "--out", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "registration.json: not found") {
		t.Errorf("no registration.json: exit %d, %s; want exit 2 naming it", r.code, r.stderr)
	}
	os.WriteFile(filepath.Join(dir, "registration.json"), reg, 0o644)
	os.Remove(filepath.Join(dir, "rounds.parquet"))
	r = ump(t, store, "report", dir, "--out", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "rounds.parquet: not found") {
		t.Errorf("no rounds.parquet: exit %d, %s", r.code, r.stderr)
	}
	// A manifest none of whose cells finished: a report of what is not.
	early := t.TempDir()
	ump(t, early, "run", "--until", "partition", writeFile(t, "m.yaml", tableManifest))
	none := t.TempDir()
	if r := ump(t, early, "report", hash[:12], "--out", none); r.code != 0 {
		t.Fatalf("report of unfinished cells: exit %d\n%s", r.code, r.stderr)
	}
	partial := "| cells | 36: 0 completed, 0 diverged; **partial**: 0 of 36 finished; " +
		"cells 1–36 are not finished, so not reported "
	if doc, _ := os.ReadFile(filepath.Join(none, "report.md")); !strings.Contains(string(doc), partial) {
		t.Errorf("the report of unfinished cells does not say so:\n%s", doc)
	}
	// --out: never into source code, a repository's root, a file, a link
	// to nothing or nowhere; the same for plot.
	code, repo, linked := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "link")
	os.WriteFile(filepath.Join(code, "doc.go"), []byte("package report\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n"), 0o644)
	os.Symlink(filepath.Join(t.TempDir(), "gone"), linked)
	file := writeFile(t, "notes.txt", "")
	for outDir, want := range map[string]string{
		code: "holds Go source (doc.go)", repo: "is a repository's root (it holds go.mod)",
		linked: "is a symbolic link", file: "is a file", "": "--out ''",
	} {
		for _, cmd := range []string{"report", "plot"} {
			if r := ump(t, store, cmd, hash[:12], "--out", outDir); r.code != 2 || !strings.Contains(r.stderr, want) {
				t.Errorf("%s --out %q: exit %d, %q; want exit 2 saying %q", cmd, outDir, r.code, r.stderr, want)
			}
		}
	}
	if entries, _ := os.ReadDir(code); len(entries) != 1 {
		t.Errorf("report --out a package wrote into it: %v", entries)
	}
	if r := ump(t, store, "report"); r.code != 2 || !strings.Contains(r.stderr, "manifest hashes") {
		t.Errorf("no argument: exit %d, %s", r.code, r.stderr)
	}
}

// TestReportShowsEveryDeclaredScope: a table tuned once per row with the
// per-entry variant declared shows the per-row table, then the variant as
// ump table --select-per entry prints it.
func TestReportShowsEveryDeclaredScope(t *testing.T) {
	t.Parallel()
	store, key := t.TempDir(), testKey(t)
	m := strings.Replace(tableManifest, "select: lr}", "select: {by: lr, per: [row, entry]}}", 1)
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", m)))
	out := filepath.Join(t.TempDir(), "report")
	if r := ump(t, store, "report", hash[:12], "--out", out); r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	doc, _ := os.ReadFile(filepath.Join(out, "report.md"))
	row, entry := ump(t, store, "table", hash[:12]), ump(t, store, "table", hash[:12], "--select-per", "entry")
	want := "### Table\n\n" + row.stdout + "\n### Table with lr chosen per entry " +
		"(a declared variant: `ump table " + hash[:12] + " --select-per entry`)\n\n" + entry.stdout
	if !strings.Contains(row.stdout, "once per row") || !strings.Contains(string(doc), want) {
		t.Errorf("report.md does not show the per-row table and then the per-entry variant:\n%s\nwant:\n%s", doc, want)
	}

	// --as: the results directory reported as those of the manifest with
	// the plain select: the same report as the store gives for it.
	plain := writeFile(t, "plain.yaml", tableManifest)
	plainHash := hashOf(t, ump(t, store, "run", plain))
	dir := filepath.Join(out, "quad-table-"+hash[:12])
	as := filepath.Join(t.TempDir(), "as")
	if r := ump(t, t.TempDir(), "report", dir, "--as", plain, "--out", as); r.code != 0 {
		t.Fatalf("report --as: exit %d\n%s", r.code, r.stderr)
	}
	fromStore := filepath.Join(t.TempDir(), "store")
	ump(t, store, "report", plainHash[:12], "--out", fromStore)
	// Who vouches differs: the store's results are the user's, --as lays
	// them out in new files that no signature covers.
	signedRow := regexp.MustCompile(`(?m)^\| results signed \| .*\n`)
	got, wantDoc := readDoc(t, as), readDoc(t, fromStore)
	if !strings.Contains(
		got,
		"| results signed | no: laid out anew as quad-table (new files, which no signature covers) from results "+
			"signed by "+key.Public()+" |",
	) {
		t.Errorf("report DIR --as MANIFEST does not say its new files are unsigned:\n%s", got)
	}
	if got, wantDoc := signedRow.ReplaceAllString(got, ""), signedRow.ReplaceAllString(wantDoc, ""); got != wantDoc {
		t.Errorf("report DIR --as MANIFEST differs from the store's report of MANIFEST:\n%s\nwant:\n%s", got, wantDoc)
	}
	if r := ump(t, t.TempDir(), "report", filepath.Join(as, "quad-table-"+plainHash[:12]), "--out",
		t.TempDir()); r.code != 0 {
		t.Errorf("the directory --as wrote does not report again: exit %d\n%s", r.code, r.stderr)
	}
	other := writeFile(t, "other.yaml", strings.Replace(tableManifest, "rounds: 15", "rounds: 16", 1))
	if r := ump(t, t.TempDir(), "report", dir, "--as", other, "--out", t.TempDir()); r.code != 2 ||
		!strings.Contains(r.stderr, "is not a layout of the same cells") {
		t.Errorf("report --as a manifest of other cells: exit %d, %q; want exit 2", r.code, r.stderr)
	}
	if r := ump(t, store, "report", hash[:12], "--as", plain, "--out", t.TempDir()); r.code != 2 ||
		!strings.Contains(r.stderr, "takes one directory") {
		t.Errorf("report HASH --as: exit %d, %q; want exit 2", r.code, r.stderr)
	}
}

// TestReportRecordsWhatItWrote: a report written with the user's key
// records every file's digest, signed; ump report of the directory says
// who signed it, and refuses a changed export or a changed record (exit
// 2, naming the file), a file the record does not list and a final.csv
// that is not final.parquet; report.md is drawn again, not read; without
// the record the report says it is unsigned, in words that do not read as
// a check.
func TestReportRecordsWhatItWrote(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	out := filepath.Join(t.TempDir(), "report")
	_, _, dir := reported(t, out)
	if doc := readDoc(t, out); !strings.Contains(doc, "| results signed | by "+key.Public()+", your key") {
		t.Errorf("report.md does not say its results are signed by %s:\n%s", key.Public(), doc)
	}
	again := filepath.Join(t.TempDir(), "again")
	if r := ump(t, t.TempDir(), "report", dir, "--out", again); r.code != 0 {
		t.Fatalf("report of the signed directory: exit %d\n%s", r.code, r.stderr)
	}
	if doc := readDoc(t, again); !strings.Contains(doc, "| results signed | by "+key.Public()+", a key you trust") {
		t.Errorf("the report of the directory does not name its signer:\n%s", doc)
	}
	// A changed export, then the same with its digest in the record
	// changed to match (the record no longer verifies against its signer).
	csvPath, recordPath := filepath.Join(dir, "final.csv"), filepath.Join(dir, "record.json")
	csv, _ := os.ReadFile(csvPath)
	record, _ := os.ReadFile(recordPath)
	forged := []byte(strings.Replace(string(csv), "completed", "completEd", 1))
	os.WriteFile(csvPath, forged, 0o644)
	if r := ump(t, t.TempDir(), "report", dir, "--out", t.TempDir()); r.code != 2 ||
		!strings.Contains(r.stderr, "final.csv was changed after ump report wrote it") {
		t.Errorf("final.csv changed: exit %d, %q; want exit 2 naming it", r.code, r.stderr)
	}
	digest := func(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }
	if !strings.Contains(string(record), digest(csv)) {
		t.Fatalf("record.json does not hold final.csv's digest:\n%s", record)
	}
	forgedRecord := strings.Replace(string(record), digest(csv), digest(forged), 1)
	os.WriteFile(recordPath, []byte(forgedRecord), 0o644)
	if r := ump(t, t.TempDir(), "report", dir, "--out", t.TempDir()); r.code != 2 ||
		!strings.Contains(r.stderr, "does not verify") {
		t.Errorf(
			"final.csv and its recorded digest changed: exit %d, %q; want exit 2 saying the signature does not verify",
			r.code,
			r.stderr,
		)
	}
	// Unsigned, the same edit passes the digests, but final.csv is checked
	// against final.parquet.
	var unsignedRecord map[string]any
	json.Unmarshal([]byte(forgedRecord), &unsignedRecord)
	delete(unsignedRecord, "signer")
	delete(unsignedRecord, "signature")
	data, _ := json.Marshal(unsignedRecord)
	os.WriteFile(recordPath, data, 0o644)
	if r := ump(t, t.TempDir(), "report", dir, "--out", t.TempDir()); r.code != 2 ||
		!strings.Contains(
			r.stderr,
			"final.csv does not hold what final.parquet holds: row 1 (cell 1), status: \"completEd\", not "+
				"\"completed\"",
		) {
		t.Errorf(
			"final.csv edited with its digest in an unsigned record: exit %d, %q; want exit 2 naming the cell",
			r.code,
			r.stderr,
		)
	}
	os.WriteFile(csvPath, csv, 0o644)
	os.WriteFile(recordPath, record, 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	if r := ump(t, t.TempDir(), "report", dir, "--out", t.TempDir()); r.code != 2 ||
		!strings.Contains(r.stderr, "holds notes.txt, which its record.json does not list") {
		t.Errorf("a file the record does not list: exit %d, %q; want exit 2 naming it", r.code, r.stderr)
	}
	os.Remove(filepath.Join(dir, "notes.txt"))

	// The report's directory stands for its manifests; its report.md, like
	// the figures, is drawn again from them: an edited one is not read.
	doc := readDoc(t, out)
	os.WriteFile(filepath.Join(out, "report.md"), []byte(strings.Replace(doc, " completed", "0 completed", 1)), 0o644)
	again = filepath.Join(t.TempDir(), "again")
	signedRow := regexp.MustCompile(`(?m)^\| results signed \| .*\n`)
	if r := ump(t, t.TempDir(), "report", out, "--out", again); r.code != 0 ||
		signedRow.ReplaceAllString(readDoc(t, again), "") != signedRow.ReplaceAllString(doc, "") {
		t.Fatalf(
			"report of the report's directory, its report.md edited: exit %d\n%s\n%s",
			r.code,
			r.stderr,
			readDoc(t, again),
		)
	}

	os.Remove(recordPath)
	unsigned := filepath.Join(t.TempDir(), "unsigned")
	if r := ump(t, t.TempDir(), "report", dir, "--out", unsigned); r.code != 0 {
		t.Fatalf("report without a record: exit %d\n%s", r.code, r.stderr)
	}
	if doc := readDoc(t, unsigned); !strings.Contains(
		doc,
		"| results signed | no: nothing vouches for these results. The digests in record.json catch accidents, not "+
			"edits",
	) {
		t.Errorf("a directory without its record is not reported unsigned:\n%s", doc)
	}
}

// TestReportNeverVouchesForWhatItDidNotCompute: forged results (numbers
// rewritten, the record removed) regenerated, and regenerated again, never
// come out signed by the user; results a stranger signed are refused
// (exit 3, naming the key) unless trusted for the report (--trust) or taken
// as unsigned (--trust-unsigned); and a record whose signer's name was
// changed does not verify.
func TestReportNeverVouchesForWhatItDidNotCompute(t *testing.T) {
	t.Parallel()
	testKey(t)
	store, hash, dir := reported(t, filepath.Join(t.TempDir(), "report"))
	name := filepath.Base(dir)
	for _, file := range []string{"final.parquet", "rounds.parquet"} { // cell 1 made 1000 times better, consistently
		data, _ := os.ReadFile(filepath.Join(dir, file))
		tb, err := artifacts.ReadParquet(data, 1<<27)
		if err != nil {
			t.Fatal(err)
		}
		cells := tb.Column("cell").Ints
		for r := range cells {
			if cells[r] == 1 {
				tb.Column("objective_gap").Floats[r] /= 1000
			}
		}
		if data, err = artifacts.Encode(tb, "parquet"); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, file), data, 0o644)
	}
	os.Remove(filepath.Join(dir, "final.csv"))
	os.Remove(filepath.Join(dir, "rounds.csv.gz"))
	os.Remove(filepath.Join(dir, "record.json"))
	from := dir
	for round := 1; round <= 2; round++ {
		next := filepath.Join(t.TempDir(), "regenerated")
		if r := ump(t, t.TempDir(), "report", from, "--out", next); r.code != 0 {
			t.Fatalf("regeneration %d of the forgery: exit %d\n%s", round, r.code, r.stderr)
		}
		doc := readDoc(t, next)
		if !strings.Contains(doc, "| results signed | no: nothing vouches") ||
			strings.Contains(doc, "| results signed | by") {
			t.Errorf("regeneration %d says someone vouches for forged results:\n%s", round, doc)
		}
		from = filepath.Join(next, name)
		var rec resultsdir.Record
		raw, _ := os.ReadFile(filepath.Join(from, "record.json"))
		if err := json.Unmarshal(raw, &rec); err != nil || rec.Signer != "" || rec.Signature != "" {
			t.Errorf("regeneration %d's record signs the results: %v\n%s", round, err, raw)
		}
	}

	strangerKey := filepath.Join(t.TempDir(), "stranger")
	stranger, _, err := signing.LoadOrCreate(strangerKey)
	if err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(t.TempDir(), "theirs")
	if r := umpEnv(t, []string{"UMP_KEY=" + strangerKey}, store, "report", hash[:12], "--out", theirs); r.code != 0 {
		t.Fatalf("the stranger's report: exit %d\n%s", r.code, r.stderr)
	}
	dir = filepath.Join(theirs, name)
	// A report reads results: a stranger's are reported, saying that no key
	// you trust vouches for them; --trust trusts the key for one report.
	for flags, want := range map[string]string{
		"--trust " + stranger.Public(): "| results signed | by " + stranger.Public() + ", a key you trust",
		"": "| results signed | no: signed by " + stranger.Public() + ", a key you " +
			"do not trust",
	} {
		next := filepath.Join(t.TempDir(), "next")
		if r := ump(t, store, append([]string{"report", dir, "--out", next}, strings.Fields(
			flags)...)...); r.code != 0 ||
			!strings.Contains(readDoc(t, next), want) {
			t.Errorf("report %s of a stranger's results: exit %d %s; want it to say %q", flags, r.code, r.stderr, want)
		}
	}
	record := filepath.Join(dir, "record.json")
	raw, _ := os.ReadFile(record)
	lookAlike := strings.ReplaceAll(
		string(raw),
		stranger.Public(),
		"friend"+stranger.Public()[strings.Index(stranger.Public(), ":"):],
	)
	os.WriteFile(record, []byte(lookAlike), 0o644)
	if r := ump(t, store, "report", dir, "--out", t.TempDir()); r.code != 2 ||
		!strings.Contains(r.stderr, "does not verify") {
		t.Errorf(
			"a record whose signer was renamed: exit %d, %q; want exit 2, the signature does not verify",
			r.code,
			r.stderr,
		)
	}
}

// readDoc is a report's report.md.
func readDoc(t *testing.T, out string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

// TestReportRefusesAMalformedFinalTable: a final.parquet without its
// status column, with an integer one, a status no cell has, a cell's
// second row, or a completed cell without its figure is bad input (exit
// 2 naming the file and what is wrong), never a panic.
func TestReportRefusesAMalformedFinalTable(t *testing.T) {
	t.Parallel()
	store, _, dir := reported(t, t.TempDir())
	original, err := os.ReadFile(filepath.Join(dir, "final.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		edit func(tb *artifacts.Table)
		want string
	}{
		"no status": {func(tb *artifacts.Table) {
			tb.Columns = slices.DeleteFunc(tb.Columns, func(c artifacts.Column) bool { return c.Name == "status" })
		}, "no text column status"},
		"integer status": {func(tb *artifacts.Table) {
			c := tb.Column("status")
			c.Ints, c.Strings = make([]int64, len(c.Strings)), nil
		}, "no text column status"},
		"garbage status": {func(tb *artifacts.Table) { tb.Column("status").Strings[0] = "grand" },
			`has status "grand"`},
		"a second row": {func(tb *artifacts.Table) {
			tb.Column("cell").Ints[1], tb.Column("cell_key").Strings[1] = tb.Column("cell").Ints[0], tb.Column(
				"cell_key").Strings[0]
		}, "has a second row"},
		"a cell key": {func(tb *artifacts.Table) { tb.Column("cell_key").Strings[0] = strings.Repeat("0", 64) },
			"cell_key is not the one registration.json gives it"},
		"NaN completed": {func(tb *artifacts.Table) {
			for r, s := range tb.Column("status").Strings {
				if s == "completed" {
					tb.Column("objective_gap").Floats[r] = math.NaN()
					return
				}
			}
		}, "has no number for objective_gap"},
		"an edited figure": {func(tb *artifacts.Table) {
			for r, s := range tb.Column("status").Strings {
				if s == "completed" {
					tb.Column("objective_gap").Floats[r] /= 2
					return
				}
			}
		}, "but its last round (15) in rounds.parquet has"},
	} {
		tb, err := artifacts.ReadParquet(original, 1<<27)
		if err != nil {
			t.Fatal(err)
		}
		c.edit(tb)
		data, err := artifacts.Encode(tb, "parquet")
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "final.parquet"), data, 0o644)
		r := ump(t, store, "report", dir, "--out", t.TempDir())
		if r.code != 2 || !strings.Contains(r.stderr, "final.parquet: ") || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, %q; want exit 2 naming final.parquet and saying %q", name, r.code, r.stderr, c.want)
		}
	}
}

// TestReportRefusesAnEditedPlan: a registration whose cells were swapped,
// or whose manifest was renamed to a path ("../../escaped") with its hash
// recomputed, is bad input: the plan must be its manifest's expansion and
// the manifest a valid one. Nothing is written outside --out.
func TestReportRefusesAnEditedPlan(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "a", "b", "out")
	store, _, dir := reported(t, out)
	original, err := os.ReadFile(filepath.Join(dir, "registration.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		edit func(reg *state.Registration)
		want string
	}{
		"cells swapped": {func(reg *state.Registration) {
			cells := reg.Plan.Cells
			cells[0].Label, cells[1].Label = cells[1].Label, cells[0].Label
			cells[0].Config, cells[1].Config = cells[1].Config, cells[0].Config
		}, "the file was edited"},
		"a path for a name": {func(reg *state.Registration) {
			reg.Plan.Manifest.Name = "../../escaped"
			reg.Plan.Hash = manifests.HashOf(reg.Plan.Manifest)
		}, `field "name": "../../escaped" is not allowed`},
	} {
		var reg state.Registration
		if err := json.Unmarshal(original, &reg); err != nil {
			t.Fatal(err)
		}
		c.edit(&reg)
		data, _ := json.MarshalIndent(reg, "", " ")
		os.WriteFile(filepath.Join(dir, "registration.json"), data, 0o644)
		again := filepath.Join(out, "again")
		r := ump(t, store, "report", dir, "--out", again)
		if r.code != 2 || !strings.Contains(r.stderr, "registration.json: ") || !strings.Contains(r.stderr, c.want) {
			t.Errorf(
				"%s: exit %d, %q; want exit 2 naming registration.json and saying %q",
				name,
				r.code,
				r.stderr,
				c.want,
			)
		}
	}
	if escaped, _ := filepath.Glob(filepath.Join(out, "..", "..", "escaped*")); len(escaped) > 0 {
		t.Errorf("report wrote outside --out: %v", escaped)
	}
}

// TestReportReadsAndWritesOnlyPlainFiles: a results directory's file that
// is a directory, a FIFO, a symbolic link (to a file outside it) or larger
// than an export can be is bad input (exit 2, at once, naming it); and a
// report.md in --out that is a symbolic link or a directory is refused,
// nothing written through it.
func TestReportReadsAndWritesOnlyPlainFiles(t *testing.T) {
	t.Parallel()
	store, _, dir := reported(t, t.TempDir())
	final := filepath.Join(dir, "final.parquet")
	saved := filepath.Join(t.TempDir(), "final.parquet")
	if err := os.Rename(final, saved); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		make func() error
		want string
	}{
		"a directory": {func() error { return os.Mkdir(final, 0o755) }, "is not a regular file"},
		"a FIFO":      {func() error { return syscall.Mkfifo(final, 0o644) }, "is not a regular file"},
		"a link":      {func() error { return os.Symlink(saved, final) }, "is not a regular file"},
		"too large": {func() error {
			f, err := os.Create(final)
			if err == nil {
				err = f.Truncate(65<<20 + 1) // sparse
				f.Close()
			}
			return err
		}, "more than the 67108864 an export of ump's holds"},
	} {
		os.RemoveAll(final)
		if err := c.make(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a FIFO read would block for ever
		cmd := exec.CommandContext(ctx, umpBin, "--store", store, "report", dir, "--out", t.TempDir())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		if code := exitStatus(t, err); code != 2 || !strings.Contains(stderr.String(), final) ||
			!strings.Contains(stderr.String(), c.want) {
			t.Errorf(
				"final.parquet %s: exit %d, %q; want exit 2 naming it and saying %q (at once)",
				name,
				code,
				stderr.String(),
				c.want,
			)
		}
	}
	os.RemoveAll(final)
	os.Rename(saved, final)

	elsewhere := writeFile(t, "elsewhere.md", "not a report\n")
	for name, make := range map[string]func(string) error{
		"a link":      func(p string) error { return os.Symlink(elsewhere, p) },
		"a directory": func(p string) error { return os.Mkdir(p, 0o755) },
	} {
		again := t.TempDir()
		if err := make(filepath.Join(again, "report.md")); err != nil {
			t.Fatal(err)
		}
		r := ump(t, store, "report", dir, "--out", again)
		if r.code != 2 || !strings.Contains(r.stderr, filepath.Join(again, "report.md")) {
			t.Errorf("report.md %s: exit %d, %q; want exit 2 naming it", name, r.code, r.stderr)
		}
	}
	if data, _ := os.ReadFile(elsewhere); string(data) != "not a report\n" {
		t.Errorf("report wrote through a link to %s: %q", elsewhere, data)
	}
	// A manifest's directory in --out that links elsewhere.
	again, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(again, filepath.Base(dir))); err != nil {
		t.Fatal(err)
	}
	r := ump(t, store, "report", dir, "--out", again)
	if entries, _ := os.ReadDir(outside); r.code != 2 || !strings.Contains(r.stderr, "is a symbolic link") ||
		len(entries) > 0 {
		t.Errorf(
			"a linked manifest directory: exit %d, %q, %d files written through it; want exit 2 and none",
			r.code,
			r.stderr,
			len(entries),
		)
	}
}

// reported runs tableManifest in a new store and reports it into out; it
// returns the store, the manifest's hash and its directory in out.
func reported(t *testing.T, out string) (store, hash, dir string) {
	t.Helper()
	store = t.TempDir()
	hash = hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", tableManifest)))
	if r := ump(t, store, "report", hash[:12], "--out", out); r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	return store, hash, filepath.Join(out, "quad-table-"+hash[:12])
}

// TestCompareTwoComputations: ump compare of committed results with
// themselves finds every cell agreeing; one argument, or two manifests of
// different names, are bad input (exit 2).
func TestCompareTwoComputations(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	table1 := filepath.Join("..", "..", "results", "table1-mnist-2c03d21133b3")
	table2 := filepath.Join("..", "..", "results", "table2-mnist-1bb37fdabf42")
	same := ump(t, store, "compare", table1, table1)
	if same.code != 0 || !strings.Contains(same.stdout, "The status agrees in 252; it differs in 0.") {
		t.Errorf("compare with itself: exit %d\n%s%s", same.code, same.stdout, same.stderr)
	}
	if r := ump(t, store, "compare", table1); r.code != 2 ||
		!strings.Contains(r.stderr, "needs two computations of one manifest") {
		t.Errorf("one argument: exit %d, %s", r.code, r.stderr)
	}
	if r := ump(t, store, "compare", table1, table2); r.code != 2 ||
		!strings.Contains(r.stderr, "compare two computations of one manifest") {
		t.Errorf("two manifests: exit %d, %s", r.code, r.stderr)
	}
	noRounds := filepath.Join(t.TempDir(), "table1")
	copyFiles(t, table1, noRounds)
	os.Remove(filepath.Join(noRounds, "rounds.parquet"))
	help := ump(t, store, "help", "compare").stdout
	if r := ump(t, store, "compare", table1, noRounds); r.code != 2 ||
		!strings.Contains(r.stderr, "rounds.parquet: not found") ||
		!strings.Contains(help, "needs only registration.json, final.parquet and rounds.parquet") {
		t.Errorf("a directory without its rounds: exit %d, %s; the help says:\n%s", r.code, r.stderr, help)
	}
}

// TestAReportKeepsAnotherReportsIndex: ump report into a directory that
// holds a report of other manifests is refused (exit 2), naming them, as
// its index would no longer list them; the command it prints reports them
// together, and the index then lists both. An --out that is a symbolic
// link is refused before anything is written through it.
func TestAReportKeepsAnotherReportsIndex(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "report")
	store, _, first := reported(t, out)
	m := writeFile(
		t,
		"m.yaml",
		strings.NewReplacer("dim: 30000", "dim: 30", "rounds: 120", "rounds: 12").Replace(longManifest),
	)
	hash := hashOf(t, ump(t, store, "run", m))
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, out) // relative, as users give it: the hint runs from anywhere all the same
	if err != nil {
		t.Fatal(err)
	}
	r := ump(t, store, "report", hash[:12], "--out", rel)
	if r.code != 2 || !strings.Contains(r.stderr, "holds a report of other manifests too ("+filepath.Base(first)+")") {
		t.Fatalf(
			"report into another report's directory: exit %d, %q; want 2 naming %s",
			r.code,
			r.stderr,
			filepath.Base(first),
		)
	}
	together := hint(t, r.stderr, regexp.MustCompile("report them together \\(`([^`]*)`\\)"))
	if r := printed(t, t.TempDir(), together); r.code != 0 { // from another directory
		t.Fatalf("%s: exit %d\n%s", together, r.code, r.stderr)
	}
	if listed, err := resultsdir.ReadRoot(out); err != nil || len(listed) != 2 || listed[0] != first {
		t.Errorf("the index after reporting both: %v %v; want %s and the other", listed, err, first)
	}
	target := t.TempDir()
	linked := filepath.Join(t.TempDir(), "linked")
	os.Symlink(target, linked)
	if r := ump(t, store, "report", hash[:12], "--out", linked); r.code != 2 ||
		!strings.Contains(r.stderr, "is a symbolic link") {
		t.Errorf("report --out a link to a directory: exit %d, %q; want 2", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("report --out a link wrote %d entries into its target", len(entries))
	}
}

// TestAReportOfNoFinishedCellReadsBack: a sweep stopped before any cell
// finished (run --until topology) reports, and its directory reports
// again and compares; reproduce leaves it out by name, since it holds
// nothing to compute again.
func TestAReportOfNoFinishedCellReadsBack(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "imports.yaml", importManifest)
	run := ump(t, store, "run", "--until", "topology", m)
	if run.code != 0 {
		t.Fatalf("run --until topology: exit %d, %s", run.code, run.stderr)
	}
	hash := hashOf(t, run)
	out := filepath.Join(t.TempDir(), "out")
	if r := ump(t, store, "report", "--out", out, hash); r.code != 0 {
		t.Fatalf("report: exit %d, %s", r.code, r.stderr)
	}
	dir := filepath.Join(out, "imports-"+hash[:12])
	again := filepath.Join(t.TempDir(), "again")
	if r := ump(t, t.TempDir(), "report", dir, "--out", again); r.code != 0 {
		t.Fatalf("report DIR of no finished cell: exit %d, %s", r.code, r.stderr)
	}
	doc, err := os.ReadFile(filepath.Join(again, "report.md"))
	noEngine := strings.Contains(string(doc), "| engine | none yet: no cell finished |")
	if err != nil || !strings.Contains(string(doc), "0 of 2 finished") || !noEngine {
		t.Errorf("the report of no finished cell: %v\n%s", err, doc)
	}
	if r := ump(t, t.TempDir(), "compare", dir, filepath.Join(again, "imports-"+hash[:12])); r.code != 0 {
		t.Errorf("compare of two directories of no finished cell: exit %d, %s", r.code, r.stderr)
	}
	r := ump(t, t.TempDir(), "reproduce", out)
	if r.code != 2 || !strings.Contains(r.stdout, "holds no finished cell") {
		t.Errorf("reproduce of no finished cell: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
}
