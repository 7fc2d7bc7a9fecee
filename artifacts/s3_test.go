package artifacts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// s3Server is an S3 server this test started on 127.0.0.1.
type s3Server struct {
	name, endpoint, access, secret string
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

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startS3Servers starts versitygw (and MinIO, when a minio binary is on
// PATH), each stopped when the test ends. It skips only when neither exists.
func startS3Servers(t *testing.T) []s3Server {
	t.Helper()
	var servers []s3Server
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
		servers = append(servers, s3Server{name: name, endpoint: addr, access: access, secret: secret})
	}
	if bin := findBinary("versitygw"); bin != "" {
		addr, dir := freePort(t), t.TempDir()
		cmd := exec.Command(bin, "--port", addr, "posix", dir)
		cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+access, "ROOT_SECRET_KEY="+secret)
		start("versitygw", cmd, addr)
	}
	if bin := findBinary("minio"); bin != "" {
		addr := freePort(t)
		cmd := exec.Command(bin, "server", t.TempDir(), "--address", addr)
		cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+access, "MINIO_ROOT_PASSWORD="+secret)
		start("minio", cmd, addr)
	}
	if len(servers) == 0 {
		t.Skip("no S3 server: install versitygw (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0; .ci/run does) or minio")
	}
	return servers
}

// makeBucket creates a fresh bucket and returns the config of a store in it.
func (srv s3Server) makeBucket(t *testing.T, bucket string) S3Config {
	t.Helper()
	c, err := minio.New(srv.endpoint, &minio.Options{Creds: credentials.NewStaticV4(srv.access, srv.secret, "")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("%s: creating bucket %s: %v", srv.name, bucket, err)
	}
	return S3Config{URL: "s3://" + bucket + "/runs/x", Endpoint: srv.endpoint, AccessKey: srv.access, SecretKey: srv.secret, Insecure: true}
}

func TestS3(t *testing.T) {
	servers := startS3Servers(t)
	ctx := context.Background()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			n := 0
			runConformance(t, func(t *testing.T) storeUnderTest {
				n++
				cfg := srv.makeBucket(t, fmt.Sprintf("conf%d", n))
				s, err := OpenS3(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				return storeUnderTest{store: s, corrupt: func(t *testing.T, ref Ref) {
					key, _ := s.key(ref)
					garbage := []byte("garbage")
					if _, err := s.client.PutObject(ctx, s.bucket, key, bytes.NewReader(garbage), int64(len(garbage)), minio.PutObjectOptions{}); err != nil {
						t.Fatal(err)
					}
				}}
			})
			t.Run("multipart", func(t *testing.T) {
				s, err := OpenS3(ctx, srv.makeBucket(t, "multipart"))
				if err != nil {
					t.Fatal(err)
				}
				s.partSize = 5 << 20
				big := bytes.Repeat([]byte("0123456789abcdef"), 12<<16) // 12 MiB: three parts
				ref, err := s.Put(ctx, big)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.Get(ctx, ref)
				if err != nil || !bytes.Equal(got, big) {
					t.Fatalf("multipart round trip: %v", err)
				}
				key, _ := s.key(ref)
				info, _ := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
				if !strings.Contains(info.ETag, "-") {
					t.Errorf("ETag %q: the 12 MiB blob was not uploaded in parts", info.ETag)
				}
			})
			t.Run("preflight errors", func(t *testing.T) {
				good := srv.makeBucket(t, "preflight")
				for _, c := range []struct {
					name string
					edit func(*S3Config)
					want string
				}{
					{"wrong secret", func(c *S3Config) { c.SecretKey = "wrong" }, "rejected the credentials"},
					{"missing bucket", func(c *S3Config) { c.URL = "s3://nosuchbucket/x" }, `bucket "nosuchbucket" does not exist`},
					{"unreachable", func(c *S3Config) { c.Endpoint = freePort(t) }, "cannot reach the endpoint"},
					{"no endpoint", func(c *S3Config) { c.Endpoint = "" }, "set UMP_S3_ENDPOINT"},
					{"bad url", func(c *S3Config) { c.URL = "http://bucket" }, "want s3://BUCKET/PREFIX"},
				} {
					cfg := good
					c.edit(&cfg)
					start := time.Now()
					_, err := OpenS3(ctx, cfg)
					if err == nil || !strings.Contains(err.Error(), c.want) {
						t.Errorf("%s: got %v, want %q", c.name, err, c.want)
					}
					t.Logf("%s: %v", c.name, err)
					if d := time.Since(start); d > checkTimeout+5*time.Second {
						t.Errorf("%s took %v", c.name, d)
					}
				}
			})
			t.Run("named objects", func(t *testing.T) {
				s, err := OpenS3(ctx, srv.makeBucket(t, "named"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.GetNamed(ctx, "manifests/none"); !errors.Is(err, ErrNotFound) {
					t.Errorf("missing named object: %v", err)
				}
				if err := s.PutNamed(ctx, "manifests/m", []byte("index")); err != nil {
					t.Fatal(err)
				}
				if got, err := s.GetNamed(ctx, "manifests/m"); err != nil || string(got) != "index" {
					t.Errorf("named round trip: %q %v", got, err)
				}
			})
		})
	}
}
