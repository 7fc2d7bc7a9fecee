package main

import (
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestRunsToldApart: a run's overrides are recorded and shown; `ump note`
// attaches a note that status and the dashboard show; `ump diff` names the
// fields that differ; `ump forget` hides a manifest from status and the
// dashboard (within a poll) until it runs again, and show still finds it.
func TestRunsToldApart(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	lower := hashOf(t, ump(t, store, "run", m, "lr=0.01"))
	plain := hashOf(t, ump(t, store, "run", m))
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"note", lower, "the", "lower", "lr"}, 0, "noted on manifest " + lower},
		{[]string{"note", lower}, 2, "needs a manifest hash and the note's text"},
		{[]string{"note", "0000000", "text"}, 2, `no manifest "0000000"`},
		{[]string{"diff", lower[:8], plain[:8]}, 0, "  lr: 0.01 -> 0.02\n"},
		{[]string{"diff", lower, lower}, 0, "the same configuration"},
		{[]string{"diff", lower}, 2, "needs exactly two manifest hashes"},
	} {
		r := ump(t, store, c.args...)
		if r.code != c.code || !strings.Contains(r.stdout+r.stderr, c.says) {
			t.Errorf(
				"ump %s: exit %d %q %q; want %d saying %q",
				strings.Join(c.args, " "),
				r.code,
				r.stdout,
				r.stderr,
				c.code,
				c.says,
			)
		}
	}
	st := ump(t, store, "status").stdout
	if !strings.Contains(st, "run with lr=0.01\n") || !strings.Contains(st, ": the lower lr\n") {
		t.Errorf("status does not show the overrides and the note:\n%s", st)
	}

	url := startServe(t, store)
	home := func() string {
		resp, err := http.Get(url + "api/store")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	if h := home(); !strings.Contains(h, `"overrides":["lr=0.01"]`) || !strings.Contains(h, `"text":"the lower lr"`) ||
		!strings.Contains(h, plain) {
		t.Errorf("the dashboard's store view lacks the overrides, the note or a manifest:\n%s", h)
	}
	// In the browser: on the home page's row and the manifest's page.
	ctx := browserContext(t, t.TempDir())
	for name, page := range map[string]string{"notes-home": url, "notes-manifest": url + "#/m/" + lower} {
		if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
			t.Fatal(err)
		}
		poll[bool](
			t,
			ctx,
			"the overrides and the note on "+page,
			`document.body.innerText.includes("run with lr=0.01") && document.body.innerText.includes(": the lower `+
				`lr")`,
		)
		screenshot(t, ctx, name)
	}
	// The manifest's page overlays the other manifest's curves, and sorts
	// its cells by a final figure.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"#/m/"+lower)); err != nil {
		t.Fatal(err)
	}
	poll[bool](t, ctx, "the compare selector", `!!document.querySelector('select[aria-label="compare with"]')`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`(() => { const s = document.querySelector('select[aria-label="compare with"]');
		s.value = "`+plain+`"; s.dispatchEvent(new Event("change")); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	poll[bool](
		t,
		ctx,
		"the other manifest's curves in the legend",
		`[...document.querySelectorAll(".legend li")].some((li) => li.textContent.includes("`+plain[:12]+`: "))`,
	)
	screenshot(t, ctx, "notes-compare")
	order := func() string {
		v, err := chromedp.Run(
			ctx,
			chromedp.Evaluate[string](
				`[...document.querySelectorAll("table.cells tbody tr")].map((tr) => tr.dataset.cell).join(",")`,
			),
		)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	gaps := strings.Split(exportCSV(t, store, lower, "final"), "\n")
	sortBy := func() {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
			`(() => { [...document.querySelectorAll("table.cells th")].find((th) => th.textContent === `+
				`"objective_gap").click(); return true; })()`)); err != nil {
			t.Fatal(err)
		}
	}
	sortBy()
	ascending := order()
	sortBy()
	if descending := order(); ascending == descending || len(strings.Split(ascending, ",")) != 2 {
		t.Errorf(
			"sorting the cells by objective_gap twice gave %q then %q; want both cells, in opposite orders (final "+
				"table %q)",
			ascending,
			descending,
			gaps,
		)
	}
	if r := ump(t, store, "forget", plain[:10]); r.code != 0 {
		t.Fatalf("forget: exit %d %s", r.code, r.stderr)
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(home(), plain) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Contains(home(), plain) {
		t.Error("the dashboard still lists the forgotten manifest after 10 s")
	}
	if st := ump(t, store, "status").stdout; strings.Contains(st, plain[:12]) || !strings.Contains(st, lower[:12]) {
		t.Errorf("status after forget: want only the other manifest:\n%s", st)
	}
	if r := ump(t, store, "show", plain[:12]); r.code != 0 {
		t.Errorf("show of a forgotten manifest: exit %d %s", r.code, r.stderr)
	}
	if r := ump(t, store, "run", m); r.code != 0 || !strings.Contains(ump(t, store, "status").stdout, plain[:12]) {
		t.Errorf("a forgotten manifest run again is not listed again: exit %d", r.code)
	}
}

// TestDashboardShowsEveryRunningCellAndItsOwnTime: under -j 2 the
// dashboard names both cells that run; a manifest whose cells another
// manifest computed says it reused them and did not run itself.
func TestDashboardShowsEveryRunningCellAndItsOwnTime(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", strings.Replace(longManifest, "rounds: 120", "rounds: 1500", 1))
	url := startServe(t, store)
	cmd := exec.Command(umpBin, "--store", store, "run", "-j", "2", m)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	both := false
	for deadline := time.Now().Add(30 * time.Second); !both && time.Now().Before(deadline); time.Sleep(
		100 * time.Millisecond) {
		resp, err := http.Get(url + "api/store")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		both = strings.Contains(string(body), `"running_cells":[1,2]`)
	}
	if !both {
		t.Error("the dashboard never showed cells 1 and 2 running under -j 2")
	}
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()

	small := writeFile(t, "small.yaml", smallManifest)
	ump(t, store, "run", small)
	renamed := writeFile(t, "renamed.yaml", strings.Replace(smallManifest, "name: long", "name: renamed", 1))
	hash := hashOf(t, ump(t, store, "run", renamed))
	if st := ump(t, store, "status", hash).stdout; !strings.Contains(
		st,
		"never ran itself; 2 cells' results reused from other manifests' runs",
	) {
		t.Errorf("status of a manifest whose cells another manifest computed:\n%s", st)
	}
}

// TestNoControlCharacterReachesTheTerminal: text from files (a row label
// holding an OSC sequence, a bell and a cell boundary; a note holding an
// escape sequence and a newline; a file name holding an escape) is printed
// by run, table (Markdown and LaTeX), status, show and an error with its
// control characters written out (\x1b, \a, \n), never as the bytes that
// would drive the terminal, and the label stays in its Markdown cell.
func TestNoControlCharacterReachesTheTerminal(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", strings.NewReplacer(
		"name: long",
		"name: hostile",
		"sweep:\n  seed: [1, 2]",
		"sweep:\n  algorithm: [{name: gt-dsum}, {name: dpsgd}]\ntable: {rows: [algorithm], value: objective_gap, "+
			"labels: {\"dpsgd()\": \"D\\e]0;pwned\\a | x\"}}",
	).Replace(smallManifest))
	run := ump(t, store, "run", m)
	if run.code != 0 {
		t.Fatalf("run: exit %d\n%s", run.code, run.stderr)
	}
	hash := hashOf(t, run)
	if r := ump(t, store, "note", hash[:12], "clear\x1b[2Jscreen\abell\nline"); r.code != 0 {
		t.Fatalf("note: exit %d\n%s", r.code, r.stderr)
	}
	row := regexp.MustCompile(`(?m)^\| D\\\\x1b\\\]0;pwned\\\\a \\\| x \| [^|]+ \|$`)
	for _, tc := range []struct {
		name string
		r    result
		want *regexp.Regexp
	}{
		{"run", run, row},
		{"table", ump(t, store, "table", hash), row},
		{"table --latex", ump(t, store, "table", "--latex", hash), regexp.MustCompile(
			`(?m)^D\\textbackslash\{\}x1b\]0;pwned\\textbackslash\{\}a \| x & `)},
		{"status", ump(t, store, "status"), regexp.MustCompile(regexp.QuoteMeta(`clear\x1b[2Jscreen\abell\nline`))},
		{"show", ump(t, store, "show", hash), regexp.MustCompile(`cell 2 algorithm=dpsgd\(\)`)},
		{"an error", ump(t, store, "run", m+"\x1b[2J"), regexp.MustCompile(regexp.QuoteMeta(
			`m.yaml\x1b[2J: no such file`))},
		{"diff", ump(t, store, "diff", hashOf(t, ump(t, store, "run", writeFile(t, "plain.yaml", strings.Replace(
			smallManifest, "name: long", "name: plain", 1)))), hash),
			regexp.MustCompile(regexp.QuoteMeta(`table.labels.dpsgd(): (absent) -> "D\u001b]0;pwned\u0007 | x"`))},
	} {
		if out := tc.r.stdout + tc.r.stderr; strings.ContainsAny(out, "\x1b\a") || !tc.want.MatchString(out) {
			t.Errorf("%s printed control characters raw, or lacks %s:\n%q", tc.name, tc.want, out)
		}
	}
}
