package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ump-lab/ump/datasets"
)

// flagName finds the flags of a help line's names ("--jobs N, -j N").
var flagName = regexp.MustCompile(`(?:^|, )(--[a-z0-9-]+)`)

// helpNames lists the names a section of `ump help` output lists: its
// COMMANDS (first word of each line) or its OPTIONS (each --flag).
func helpNames(help, section string) []string {
	var names []string
	in := false
	for _, line := range strings.Split(help, "\n") {
		switch {
		case strings.HasPrefix(line, section+":"):
			in = true
		case in && line != "" && !strings.HasPrefix(line, " "):
			in = false
		case in && section == "COMMANDS":
			if f := strings.Fields(line); len(f) > 0 && !strings.HasSuffix(f[0], ",") && f[0] != "help" {
				names = append(names, strings.TrimSuffix(f[0], ","))
			}
		case in:
			spec, _, _ := strings.Cut(strings.TrimSpace(line), "  ") // the flag's names, before its usage
			for _, m := range flagName.FindAllStringSubmatch(spec, -1) {
				if m[1] != "--help" && m[1] != "--version" {
					names = append(names, m[1])
				}
			}
		}
	}
	return names
}

// docSections splits a docs page into its sections: heading -> the heading
// and text up to the next heading of any level.
func docSections(page string) map[string]string {
	out := map[string]string{}
	head := ""
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "#") {
			head = line
		}
		out[head] += line + "\n"
	}
	return out
}

// TestEveryCommandAndFlagIsDocumented: each command `ump help` lists (and
// each subcommand) has a section of docs/commands.md whose heading names
// it, and each flag its help lists appears in one of its sections; the
// global flags appear in the Global flags section.
func TestEveryCommandAndFlagIsDocumented(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := docSections(string(page))
	help := func(args ...string) string {
		out, err := exec.Command(umpBin, append(args, "--help")...).CombinedOutput()
		if err != nil {
			t.Fatalf("ump %s --help: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	top := help()
	global := sections["## Global flags"]
	for _, flag := range helpNames(top, "GLOBAL OPTIONS") {
		if !strings.Contains(global, flag) {
			t.Errorf("docs/commands.md, Global flags: %s is not documented", flag)
		}
	}
	commands := helpNames(top, "COMMANDS")
	if len(commands) < 20 {
		t.Fatalf("ump help lists %d commands: %q", len(commands), commands)
	}
	var check func(path []string)
	check = func(path []string) {
		name := "ump " + strings.Join(path, " ")
		text := ""
		for head, body := range sections {
			if strings.HasPrefix(head, "## ") &&
				regexp.MustCompile("`"+regexp.QuoteMeta(name)+`[ |\x60]`).MatchString(head) {
				text += body
			}
		}
		out := help(path...)
		subs := helpNames(out, "COMMANDS")
		if text == "" && len(subs) == 0 {
			t.Errorf("docs/commands.md has no section whose heading names `%s`", name)
		}
		for _, flag := range helpNames(out, "OPTIONS") {
			if !strings.Contains(text, flag) {
				t.Errorf("docs/commands.md: %s's flag %s is not documented in its section", name, flag)
			}
		}
		for _, sub := range subs {
			check(append(append([]string{}, path...), sub))
		}
	}
	for _, c := range commands {
		check([]string{c})
	}
}

// TestREADMECommandsRunAsShown runs the README's console blocks in order,
// as a new user would, in an empty store, in a directory that holds the
// committed results (the tour imports one): each `$ ump ...` line (or a
// line that pipes keys into `xargs -n1 ump`) must exit
// as shown (0, or the `(exit N)` line under it), where the README shows
// the manifest line of a run, print the same hash, and print every line
// of figures the README shows (a cell's status line, a Markdown or LaTeX
// table row): the CPU engine gives the same bits on every machine, so the
// quickstart's figures are the README's everywhere.
//
// It is the package's one test that does not call t.Parallel: its
// quickstart is the package's longest computation (some 140 s of CPU on
// 2 cores), and a serial test runs before every parallel one, so it
// starts first, beside the other packages' tests, instead of late among
// the parallel tests, where Go happened to start it and it was make
// test's last 2 minutes.
func TestREADMECommandsRunAsShown(t *testing.T) {
	if info, _ := datasets.Lookup("mnist"); !info.Installed(datasets.DefaultDir()) {
		t.Skipf("mnist is not installed in %s (run `ump data fetch mnist`; .ci/run installs it)", datasets.DefaultDir())
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	type step struct{ command, shown string }
	var steps []step
	block := regexp.MustCompile("(?s)```console\n(.*?)```")
	for _, b := range block.FindAllStringSubmatch(string(readme), -1) {
		for _, part := range strings.Split("\n"+b[1], "\n$ ")[1:] {
			command, shown, _ := strings.Cut(part, "\n")
			steps = append(steps, step{command, shown})
		}
	}
	if len(steps) < 5 {
		t.Fatalf("the README shows %d commands in console blocks, want the tour's", len(steps))
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(umpBin, filepath.Join(bin, "ump")); err != nil {
		t.Fatal(err)
	}
	results, err := filepath.Abs(filepath.Join("..", "..", "results")) // the committed results the tour imports
	if err == nil {
		err = os.Symlink(results, filepath.Join(dir, "results"))
	}
	if err != nil {
		t.Fatal(err)
	}
	exitLine := regexp.MustCompile(`(?m)^\(exit (\d+)\)$`)
	figures := regexp.MustCompile(`^(\d+ +(completed|diverged|failed) |\| .*\d.* \|$|.* & .*\d.*\\\\$)`)
	for _, s := range steps {
		if !strings.HasPrefix(s.command, "ump ") && !strings.Contains(s.command, " | xargs -n1 ump ") {
			t.Fatalf("README console line %q does not run ump", s.command)
		}
		cmd := exec.Command("bash", "-c", s.command)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "UMP_STORE="+filepath.Join(dir, ".ump"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		code := exitStatus(t, cmd.Run())
		want := 0
		if m := exitLine.FindStringSubmatch(s.shown); m != nil {
			want, _ = strconv.Atoi(m[1])
		}
		if code != want {
			t.Fatalf("README: `%s` exited %d, the README shows %d:\n%s", s.command, code, want, out.String())
		}
		if strings.HasPrefix(s.shown, "manifest ") {
			first, _, _ := strings.Cut(s.shown, "\n")
			if !strings.Contains(out.String(), first+"\n") {
				t.Errorf("README: `%s` did not print %q:\n%s", s.command, first, out.String())
			}
		}
		for _, line := range strings.Split(s.shown, "\n") {
			if figures.MatchString(line) && !strings.Contains(out.String(), line+"\n") {
				t.Errorf(
					"README: `%s` did not print the figures the README shows:\n%s\nit printed:\n%s",
					s.command,
					line,
					out.String(),
				)
			}
		}
	}
}

// TestNothingTrackedPointsOutsideTheRepository: no tracked file names the
// project's shared folder beside the repository, which a user's clone
// does not have (the paper's source, the design notes): the repository
// stands alone.
func TestNothingTrackedPointsOutsideTheRepository(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v)", err)
	}
	outside := "../" + "shared"
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.Index(string(data), outside); i >= 0 {
			line := strings.Count(string(data[:i]), "\n") + 1
			t.Errorf(
				"%s:%d names %s, which a clone does not have; say it in the repository's own docs",
				name,
				line,
				outside,
			)
		}
	}
}
