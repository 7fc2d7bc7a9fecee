package s3test

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Server is an S3 server a test started on 127.0.0.1.
type Server struct {
	Name, Endpoint, Access, Secret string
	Process                        *os.Process // to stop and continue it
}

// findBinary looks on PATH, then in Go's install directory.
func findBinary(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	out, _ := exec.Command("go", "env", "GOPATH").Output()
	p := filepath.Join(strings.TrimSpace(string(out)), "bin", name)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// FreePort returns a free 127.0.0.1 address.
func FreePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Start starts versitygw (and MinIO, when a minio binary is on
// PATH), each stopped when the test ends. It skips only when neither exists.
func Start(t *testing.T) []Server {
	t.Helper()
	var servers []Server
	const access, secret = "umptestaccess", "umptestsecret1234"
	start := func(name string, cmd *exec.Cmd, addr string) {
		var logs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", name, err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		deadline := time.Now().Add(30 * time.Second)
		for {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not listen on %s:\n%s", name, addr, logs.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		servers = append(
			servers,
			Server{Name: name, Endpoint: addr, Access: access, Secret: secret, Process: cmd.Process},
		)
	}
	if bin := findBinary("versitygw"); bin != "" {
		addr, dir := FreePort(t), t.TempDir()
		cmd := exec.Command(bin, "--port", addr, "posix", dir)
		cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+access, "ROOT_SECRET_KEY="+secret)
		start("versitygw", cmd, addr)
	}
	if bin := findBinary("minio"); bin != "" {
		addr := FreePort(t)
		cmd := exec.Command(bin, "server", t.TempDir(), "--address", addr)
		cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+access, "MINIO_ROOT_PASSWORD="+secret)
		start("minio", cmd, addr)
	}
	if len(servers) == 0 {
		t.Skip(
			"no S3 server: install versitygw (go install " +
				"github.com/versity/versitygw/cmd/versitygw@v1.8.0; .ci/run installs it) or minio",
		)
	}
	return servers
}

// MakeBucket creates a bucket.
func (srv Server) MakeBucket(t *testing.T, bucket string) {
	t.Helper()
	c, err := minio.New(srv.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(srv.Access, srv.Secret, "")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("%s: creating bucket %s: %v", srv.Name, bucket, err)
	}
}
