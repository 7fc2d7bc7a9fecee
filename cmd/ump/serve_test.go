package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// liveManifest runs long enough (several seconds) for a page to watch its
// curves grow: two algorithms, two learning rates tuned per entry, two
// seeds.
const liveManifest = `version: 1
name: live
task: {dataset: quadratic, quadratic: {dim: 20000, sigma: 0.5}}
workers: 8
rounds: 300
local_steps: 2
lr: 0.02
algorithm: {name: d-sum}
sweep:
  algorithm: [{name: d-sum}, {name: local-sgd-m}]
  lr: [0.01, 0.02]
  seed: [1, 2]
evaluate: {every: 3}
checkpoint: {every: 50}
`

// startServe starts `ump serve` on a free loopback port and returns its
// address (as printed) once it answers; the test stops it.
func startServe(t *testing.T, store string, args ...string) string {
	t.Helper()
	cmd := exec.Command(umpBin, append([]string{"--store", store, "serve", "--addr", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	m := regexp.MustCompile(`^serving (http://127\.0\.0\.1:\d+/\S*)\n$`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("ump serve printed %q (%v), not its address; stderr:\n%s", line, err, stderr.String())
	}
	go io.Copy(io.Discard, out)
	return m[1]
}

// chromium is the path of a Chromium, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("needs a headless Chromium (Debian chromium; .ci/run installs it)")
	return ""
}

// browserContext starts a headless Chromium (Debian's chromium) for the
// test, downloading into dir.
func browserContext(t *testing.T, dir string) context.Context {
	t.Helper()
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1360, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: ptr(true),
	}); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

func ptr[T any](v T) *T { return &v }

// poll waits up to a minute for a JavaScript expression to be truthy and
// returns its value.
func poll[T any](t *testing.T, ctx context.Context, what, expr string) T {
	t.Helper()
	v, err := chromedp.Run(
		ctx,
		chromedp.Poll[T](
			expr,
			chromedp.WithPollingInterval(100*time.Millisecond),
			chromedp.WithPollingTimeout(time.Minute),
		),
	)
	if err != nil {
		shot := filepath.Join(t.TempDir(), "page.png")
		if png, serr := chromedp.Run(ctx, chromedp.FullScreenshot(100)); serr == nil {
			os.WriteFile(shot, png, 0o644)
		}
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("waiting for %s: %v\npage (screenshot %s):\n%s", what, err, shot, text)
	}
	return v
}

// screenshot keeps a full-page screenshot where UMP_SCREENSHOTS names a
// directory (to look at the pages), else nowhere.
func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("UMP_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
}

// TestServeFollowsASweepInABrowser drives a real headless Chromium over
// `ump serve` while `ump run` writes the store: the manifest's curves gain
// points as the sweep runs, the table then shows what `ump table` prints,
// a table entry leads to its cells and a cell to its page, and the
// downloaded exports are byte for byte what `ump export` writes.
func TestServeFollowsASweepInABrowser(t *testing.T) {
	t.Parallel()
	downloads := t.TempDir()
	ctx := browserContext(t, downloads)
	store := t.TempDir()
	m := writeFile(t, "live.yaml", liveManifest)
	run := exec.Command(umpBin, "--store", store, "run", m)
	var runOut, runErr bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runErr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if s := snapshot(store); s != nil && s.PID == run.Process.Pid && s.Stage == "train" && s.Round >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never started training: %s", runErr.String())
		}
	}
	hash := hashOf(t, result{stdout: runOut.String()})
	url := startServe(t, store)

	// Curves grow while the sweep runs.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"#/m/"+hash[:12])); err != nil {
		t.Fatal(err)
	}
	points := `[...document.querySelectorAll("path.series")].reduce((n, p) => n + Number(p.dataset.points), 0)`
	first := poll[int](t, ctx, "a curve", points)
	writer := poll[string](
		t,
		ctx,
		"the writer named",
		`document.getElementById("writer").textContent.includes("PID") && `+
			`document.getElementById("writer").textContent`,
	)
	if !strings.Contains(writer, fmt.Sprint(run.Process.Pid)) {
		t.Errorf("header names %q, not the run's PID %d", writer, run.Process.Pid)
	}
	screenshot(t, ctx, "manifest-running")
	grown := poll[int](t, ctx, "the curves to gain points", fmt.Sprintf("(%s) > %d && (%s)", points, first, points))
	if s := snapshot(store); s == nil || s.State != "running" {
		t.Errorf("the curves grew from %d to %d points, but not while the run was running (%+v)", first, grown, s)
	}
	t.Logf("curves: %d points, then %d while the sweep ran", first, grown)

	if err := run.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, runErr.String())
	}

	// The finished table: what `ump table` prints, entry by entry.
	poll[bool](
		t,
		ctx,
		"the page to show the finished sweep",
		`document.getElementById("writer").textContent.includes("idle") && document.querySelectorAll("table.cells `+
			`.badge.completed").length === 8 && [...document.querySelectorAll("a.entry")].every(a => a.textContent `+
			`!== "–")`,
	)
	screenshot(t, ctx, "manifest")
	table := ump(t, store, "table", hash)
	entries, err := chromedp.Run(
		ctx,
		chromedp.Evaluate[[]string](
			`[...document.querySelectorAll("table.results tbody tr")].map(r => [...r.cells].map(c => `+
				`c.textContent).join(" | "))`,
		),
	)
	if err != nil || len(entries) != 2 {
		t.Fatalf("results table rows %q (%v), want 2 (d-sum, local-sgd-m)", entries, err)
	}
	for _, row := range entries {
		md := "| " + row
		if !strings.Contains(strings.ReplaceAll(table.stdout, "**", ""), md) {
			t.Errorf("page row %q is not a row of `ump table`:\n%s", row, table.stdout)
		}
	}

	// The charts take their card's whole width; each finished cell's
	// final figure can be drawn against any swept parameter, numeric ones
	// on a numeric axis.
	if ratio := poll[float64](t, ctx, "a chart",
		`(() => { const f = document.querySelector("figure.chart svg"); return f && f.getBoundingClientRect().width `+
			`/ f.closest("section").clientWidth; })()`); ratio < 0.9 {
		t.Errorf("a chart takes %.2f of its card's width; want all of it", ratio)
	}
	dots := poll[int](
		t,
		ctx,
		"the final figure against a parameter",
		`document.querySelectorAll("svg.scatter circle.point").length`,
	)
	if dots != 8 {
		t.Errorf("the scatter shows %d cells, want the 8 finished ones", dots)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(`select[aria-label="parameter"]`, "lr")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`document.querySelector('select[aria-label="parameter"]').dispatchEvent(new Event("change"))`)); err != nil {
		t.Fatal(err)
	}
	ticks := poll[string](
		t,
		ctx,
		"the scatter against lr",
		`document.querySelector('select[aria-label="parameter"]').value === "lr" && `+
			`[...document.querySelectorAll("svg.scatter text")].map(t => t.firstChild.nodeValue).join("|")`,
	)
	if labels := strings.Split(ticks, "|"); !slices.Contains(labels, "0.01") || !slices.Contains(labels, "0.02") ||
		!slices.Contains(labels, "lr") {
		t.Errorf("the scatter against lr has labels %q; want the values 0.01 and 0.02 and the axis named", ticks)
	}

	// A table entry leads to its cells, a cell to its page.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("table.results a.entry"))); err != nil {
		t.Fatal(err)
	}
	groups := poll[int](t, ctx, "the entry's cells", `document.querySelectorAll("table.entry-cells").length`)
	if groups != 2 {
		t.Errorf("entry page shows %d groups of cells, want one per lr (2)", groups)
	}
	screenshot(t, ctx, "entry")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("table.entry-cells a.cell-link"))); err != nil {
		t.Fatal(err)
	}
	key := poll[string](
		t,
		ctx,
		"the cell page",
		`location.hash.includes("/cell/") && document.querySelector("dl.facts dd") && `+
			`document.querySelector("dl.facts dd").textContent`,
	)
	rows := exportRows(t, store, hash, "final")
	if col := indexOf(rows[0], "cell_key"); col < 0 || rows[1][col] != key {
		t.Errorf("the first entry's first cell shows key %q; ump export says cell 1 is %v", key, rows[1])
	}
	heat := poll[int](t, ctx, "the stages", `document.querySelectorAll("table.stages tr").length`)
	if heat != 5 { // the header and partition, topology, train, evaluate
		t.Errorf("the cell page lists %d stage rows, want 4 and the header", heat-1)
	}
	// The cell's curve is drawn, in a colour, through its evaluated rounds.
	curve := poll[string](
		t,
		ctx,
		"the cell's curve",
		`Array.from(document.querySelectorAll("svg path")).filter((p) => p.getAttribute("fill") === "none" && `+
			`(p.getAttribute("d") || "").includes("L")).map((p) => p.getAttribute("stroke")).join(" ")`,
	)
	if !regexp.MustCompile(`^#[0-9a-fA-F]{6}$`).MatchString(curve) {
		t.Errorf("the cell page's curve has stroke %q; want one curve in a colour of the palette", curve)
	}
	// The cell's settings as a table, the swept ones marked; its axes in words.
	settings := poll[[]string](
		t,
		ctx,
		"the cell's settings",
		`[...document.querySelectorAll("table.settings tr.swept td:first-child")].map(td => td.textContent)`,
	)
	for _, want := range []string{"algorithm.name", "lr", "seed"} {
		if !slices.Contains(settings, want) {
			t.Errorf("the cell's settings mark %q swept; want %s among them", settings, want)
		}
	}
	if axes, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("svg .axis-label")].map(t => t.textContent)`)); len(
		axes,
	) != 2 ||
		strings.Contains(strings.Join(axes, " "), "_") {
		t.Errorf("the cell's chart names its axes %q; want two, in words", axes)
	}
	screenshot(t, ctx, "cell")

	// Exports downloaded from the pages are ump export's bytes: the cell's
	// rows of the manifest's table on a cell's page, the whole table on the
	// manifest's.
	cellCSV := download(t, ctx, downloads, `a.download[data-table="final"][data-format="csv"]`)
	whole := ump(t, store, "export", "--manifest", hash, "--table", "final", "--out", "-").stdout
	lines := strings.SplitAfter(whole, "\n")
	if want := lines[0] + lines[1]; string(cellCSV) != want {
		t.Errorf("the cell page's final.csv:\n%s\nwant the header and cell 1's row of ump export:\n%s", cellCSV, want)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"#/m/"+hash)); err != nil {
		t.Fatal(err)
	}
	poll[bool](t, ctx, "the manifest page", `!!document.querySelector("table.results")`)
	for _, d := range []struct{ table, format string }{{"rounds", "csv"}, {"final", "parquet"}} {
		got := download(t, ctx, downloads, fmt.Sprintf(`a.download[data-table=%q][data-format=%q]`, d.table, d.format))
		r := ump(t, store, "export", "--manifest", hash, "--table", d.table, "--format", d.format, "--out", "-")
		if r.code != 0 || !bytes.Equal(got, []byte(r.stdout)) {
			t.Errorf(
				"downloaded %s.%s (%d bytes) differs from ump export's (%d bytes, exit %d)",
				d.table,
				d.format,
				len(got),
				len(r.stdout),
				r.code,
			)
		}
	}

	// The home page names each manifest's best entry: the one ump table
	// puts in bold.
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"#/")); err != nil {
		t.Fatal(err)
	}
	home := poll[string](
		t,
		ctx,
		"the home page's best entry",
		`document.querySelector("tr.manifest td.best") && document.querySelector("tr.manifest td.best").textContent`,
	)
	bold := regexp.MustCompile(`\*\*([^*]+)\*\*`).FindStringSubmatch(table.stdout)
	if bold == nil || !strings.HasPrefix(home, bold[1]+", ") {
		t.Errorf("the home page's best entry is %q; want ump table's bold entry first:\n%s", home, table.stdout)
	}
}

func indexOf(row []string, name string) int {
	for i, v := range row {
		if v == name {
			return i
		}
	}
	return -1
}

// download clicks the link sel names and returns the file the browser
// downloaded.
func download(t *testing.T, ctx context.Context, dir, sel string) []byte {
	t.Helper()
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	progress := chromedp.BrowserEvents(wait, browser.DownloadProgress)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		t.Fatal(err)
	}
	for ev, err := range progress {
		if err != nil {
			t.Fatalf("downloading %s: %v", sel, err)
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			data, err := os.ReadFile(filepath.Join(dir, ev.GUID))
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
	t.Fatalf("downloading %s: no download finished", sel)
	return nil
}

// TestServeRefusesWhatItMustNot: outside loopback a token is required;
// hashes, cells and tables from the URL are checked; nothing is written
// to the store; it is read-only.
func TestServeRefusesWhatItMustNot(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := writeFile(t, "m.yaml", smallManifest)
	hash := hashOf(t, ump(t, store, "run", m))
	before := tree(t, store)
	url := startServe(t, store)
	get := func(path string, header ...string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(url, "/")+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			if header[i] == "Host" {
				req.Host = header[i+1]
			} else {
				req.Header.Set(header[i], header[i+1])
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, c := range []struct {
		path string
		code int
		says string
	}{
		{"/api/manifests/" + hash[:10], 200, `"name":"long"`},
		{"/api/manifests/..%2f..%2fetc", 400, "not a manifest hash"},
		{"/api/manifests/ABC", 400, "not a manifest hash"},
		{"/api/manifests/0000000", 404, "no manifest"},
		{"/api/manifests/" + hash + "/cells/3", 404, "cells 1 to 2"},
		{"/api/manifests/" + hash + "/cells/-1", 404, "cells 1 to 2"},
		{"/api/manifests/" + hash + "/entries/1/1", 200, `"cells":[`},
		{"/api/manifests/" + hash + "/entries/0/1", 404, "rows 1 to 1 and columns 1 to 1"},
		{"/api/manifests/" + hash + "/export?table=../../lock&format=csv", 400, "table="},
		{"/api/manifests/" + hash + "/export?table=final&format=exe", 400, "format="},
		{"/api/manifests/" + hash + "/curves?y=rm", 400, "y="},
		{"/assets/../lock", 404, ""},
		{"/assets/app.js", 200, "ump serve: the page"},
	} {
		if code, body := get(c.path); code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("GET %s: %d %q; want %d saying %q", c.path, code, body, c.code, c.says)
		}
	}
	if code, body := get("/api/store", "Host", "evil.example:80"); code != 403 || !strings.Contains(body, "loopback") {
		t.Errorf("a request to another host name (DNS rebinding): %d %q; want 403", code, body)
	}
	resp, err := http.Post(url+"api/store", "text/plain", nil)
	if err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %v %v; want 405", resp, err)
	}
	if after := tree(t, store); after != before {
		t.Errorf("serving changed the store:\n%s\nvs\n%s", before, after)
	}
	start := time.Now()
	if again := ump(t, store, "run", m); again.code != 0 || time.Since(start) > 5*time.Second {
		t.Errorf(
			"a run beside ump serve: exit %d after %s; it must not wait for serve\n%s",
			again.code,
			time.Since(start),
			again.stderr,
		)
	}

	// Any other address needs the printed token.
	cmd := exec.Command(umpBin, "--store", store, "serve", "--addr", "0.0.0.0:0")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGINT); cmd.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	tm := regexp.MustCompile(`^serving http://[^:/]+:(\d+)/\?token=([0-9a-f]{32})\n$`).FindStringSubmatch(line)
	if tm == nil {
		t.Fatalf("serve --addr 0.0.0.0:0 printed %q, want an address with a token", line)
	}
	base := "http://127.0.0.1:" + tm[1]
	tokened := func(path string, header ...string) int {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := tokened("/api/store"); code != 401 {
		t.Errorf("no token: %d, want 401", code)
	}
	if code := tokened("/api/store?token=" + strings.Repeat("0", 32)); code != 401 {
		t.Errorf("a wrong token: %d, want 401", code)
	}
	if code := tokened("/api/store?token=" + tm[2]); code != 200 {
		t.Errorf("the printed token: %d, want 200", code)
	}
	if code := tokened("/api/store", "Cookie", "ump_token="+tm[2]); code != 200 {
		t.Errorf("the token's cookie: %d, want 200", code)
	}
	if code := tokened("/api/store", "Authorization", "Bearer "+tm[2]); code != 200 {
		t.Errorf("the token as a bearer: %d, want 200", code)
	}
}

// TestServePageLetsAHeadlessBrowserFinish: the page asks for the store's
// state with requests that end, so a headless Chromium's virtual time
// runs out and it dumps the page (an open event stream kept it waiting
// for ever).
func TestServePageLetsAHeadlessBrowserFinish(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	store := t.TempDir()
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", smallManifest)))
	url := startServe(t, store)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dom, err := exec.CommandContext(ctx, path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--virtual-time-budget=5000", "--dump-dom", url).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom of the page: %v (did it wait for the page to go idle?)", err)
	}
	if !strings.Contains(string(dom), hash[:12]) || !strings.Contains(string(dom), "the store is idle") {
		t.Errorf("the page's DOM lacks the manifest %.12s or the store's state:\n%s", hash, dom)
	}
}

// TestServeShowsTheTableLabels: the dashboard's table and entry pages
// name rows, columns and paths as the table block's labels say, as ump
// table does.
func TestServeShowsTheTableLabels(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	m := strings.Replace(
		tableManifest,
		"select: lr}",
		`select: lr, labels: {algorithm: Algorithm, "d-sum(alpha=2,beta=0.9)": D-SUM, topology.kind: graph}}`,
		1,
	)
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "m.yaml", m)))
	url := strings.TrimSuffix(startServe(t, store), "/")
	get := func(path string) string {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		return string(body)
	}
	table := get("/api/manifests/" + hash + "/table")
	for _, want := range []string{`"row_header":"Algorithm"`, `"columns":["graph = ring","graph = full"]`,
		`"label":"D-SUM"`, `"label":"d-sum(alpha=0,beta=0.9)"`} {
		if !strings.Contains(table, want) {
			t.Errorf("the table's JSON lacks %s:\n%s", want, table)
		}
	}
	if entry := get("/api/manifests/" + hash + "/entries/1/2"); !strings.Contains(
		entry,
		`"row":"D-SUM","column":"graph = full"`,
	) {
		t.Errorf("the entry's JSON does not name its row and column by their labels:\n%s", entry)
	}
}

// chartsManifest sweeps five algorithms (long labels) on two topologies
// and a learning rate that diverges, on the quadratic task.
const chartsManifest = `version: 1
name: charts
task: {dataset: quadratic, quadratic: {dim: 10, sigma: 0.3}}
workers: 6
rounds: 12
local_steps: 2
lr: 0.05
algorithm: {name: d-sum}
sweep:
  algorithm: [{name: local-sgd-m}, {name: qg-dsgdm}, {name: slowmo}, {name: d-sum}, {name: gt-dsum}]
  topology.kind: [ring, full]
  lr: [0.05, 5]
table: {rows: [algorithm], columns: [topology.kind], value: objective_gap, select: lr}
`

// homeWraps lists the home page's manifest names, hashes, start dates and
// run times that wrap onto a second line, and says so when the manifests
// table runs past the page's column (null until the table shows a row).
const homeWraps = `(() => { const t = document.querySelector("table.manifests");
	const rows = t ? [...t.querySelectorAll("tr")].filter(r => r.querySelector("td")) : [];
	if (!rows.length) return null;
	const lines = c => { const r = document.createRange(); r.selectNodeContents(c); return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; };
	const out = rows.flatMap(r => [...r.cells].slice(0, 4).filter(c => lines(c) > 1).map(c => c.textContent));
	const m = document.querySelector("main"), right = m.getBoundingClientRect().right - parseFloat(getComputedStyle(m).paddingRight);
	if (t.getBoundingClientRect().right > right + 0.5) out.push("the table runs past the page");
	return out; })()`

// TestServeChartsFitAndShowDivergence: at 1024, 1400 and 1920 pixels the
// final figure against the algorithm keeps every label inside its chart
// (the last one was cut at the edge), colours the dots by the topology
// (the algorithm is both the x axis and the table's rows), draws the
// diverged cells as crosses, and the cells table shows their figures as
// *, as the results table does; the home page's table fits the window
// without wrapping a name, hash or date.
func TestServeChartsFitAndShowDivergence(t *testing.T) {
	t.Parallel()
	ctx := browserContext(t, t.TempDir())
	store := t.TempDir()
	hash := hashOf(t, ump(t, store, "run", writeFile(t, "charts.yaml", chartsManifest)))
	url := startServe(t, store)
	// the labels drawn outside the chart's box, once it is drawn against the algorithm
	outside := `(() => { const s = document.querySelector("svg.scatter");
		if (!s || !s.getAttribute("aria-label").endsWith(" against algorithm")) return null;
		const box = s.getBoundingClientRect();
		return [...s.querySelectorAll("text")].filter(t => { const b = t.getBoundingClientRect(); return b.left < box.left - 0.5 || b.right > box.right + 0.5; }).map(t => t.textContent); })()`
	for _, width := range []int64{1024, 1400, 1920} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(url+"#/m/"+hash[:12]+"/"+fmt.Sprint(width))); err != nil {
			t.Fatal(err)
		}
		poll[bool](
			t,
			ctx,
			"the scatter",
			`!!document.querySelector('select[aria-label="parameter"]') && !!document.querySelector("svg.scatter")`,
		)
		if err := chromedp.Do(ctx, chromedp.SetValue(`select[aria-label="parameter"]`, "algorithm")); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
			`document.querySelector('select[aria-label="parameter"]')`+
				`.dispatchEvent(new Event("change"))`)); err != nil {
			t.Fatal(err)
		}
		if cut := poll[[]string](t, ctx, "the scatter against the algorithm", outside); len(cut) > 0 {
			t.Errorf("at %d px the scatter's labels %q run past its edges", width, cut)
		}
		screenshot(t, ctx, fmt.Sprintf("charts-%d", width))
	}
	legend := poll[string](
		t,
		ctx,
		"the scatter's legend",
		`document.querySelector("svg.scatter").getAttribute("aria-label").endsWith(" against algorithm") && `+
			`[...document.querySelectorAll("figure.sweep .legend li")].map(l => l.textContent).join("|")`,
	)
	if !strings.Contains(legend, "ring") || !strings.Contains(legend, "full") ||
		!strings.Contains(legend, "× diverged") ||
		strings.Contains(legend, "gt-dsum") {
		t.Errorf(
			"with the algorithm on the x axis the dots are coloured by %q; want the topologies and the diverged mark",
			legend,
		)
	}
	crosses := poll[int](
		t,
		ctx,
		"the diverged cells",
		`document.querySelectorAll("svg.scatter .point.diverged").length`,
	)
	diverged := poll[[]string](
		t,
		ctx,
		"the cells table",
		`[...document.querySelectorAll("table.cells tbody tr")].filter(r => `+
			`r.querySelector(".badge.diverged")).map(r => r.cells[r.cells.length - 1].textContent)`,
	)
	if crosses == 0 || crosses != len(diverged) {
		t.Errorf("%d crosses for %d diverged cells", crosses, len(diverged))
	}
	for _, v := range diverged {
		if v != "*" {
			t.Errorf("a diverged cell's figure shows %q, want *", v)
		}
	}
	for _, width := range []int64{1024, 1400, 1920} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(url+"#/"+fmt.Sprint(width))); err != nil {
			t.Fatal(err)
		}
		if wrapped := poll[[]string](t, ctx, "the home page", homeWraps); len(wrapped) > 0 {
			t.Errorf("at %d px the home page's manifests table wraps or overflows: %q", width, wrapped)
		}
		screenshot(t, ctx, fmt.Sprintf("home-%d", width))
	}
}
