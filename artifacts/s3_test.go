package artifacts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/ump-lab/ump/artifacts/s3test"
)

// s3config makes a fresh bucket on srv and configures a store in it.
func s3config(t *testing.T, srv s3test.Server, bucket string) S3Config {
	t.Helper()
	srv.MakeBucket(t, bucket)
	return S3Config{
		URL:       "s3://" + bucket + "/runs/x",
		Endpoint:  srv.Endpoint,
		AccessKey: srv.Access,
		SecretKey: srv.Secret,
		Insecure:  true,
	}
}

func TestS3(t *testing.T) {
	servers := s3test.Start(t)
	ctx := context.Background()
	for _, srv := range servers {
		t.Run(srv.Name, func(t *testing.T) {
			n := 0
			runConformance(t, func(t *testing.T) storeUnderTest {
				n++
				cfg := s3config(t, srv, fmt.Sprintf("conf%d", n))
				s, err := OpenS3(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				return storeUnderTest{store: s, corrupt: func(t *testing.T, ref Ref) {
					key, _ := s.key(ref)
					garbage := []byte("garbage")
					if _, err := s.client.PutObject(ctx, s.bucket, key, bytes.NewReader(garbage), int64(len(garbage)),
						minio.PutObjectOptions{}); err != nil {
						t.Fatal(err)
					}
				}}
			})
			t.Run("named", func(t *testing.T) {
				runNamedConformance(t, func(t *testing.T) Named {
					n++
					s, err := OpenS3(ctx, s3config(t, srv, fmt.Sprintf("named%d", n)))
					if err != nil {
						t.Fatal(err)
					}
					return s
				})
			})
			t.Run("multipart", func(t *testing.T) {
				s, err := OpenS3(ctx, s3config(t, srv, "multipart"))
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
				good := s3config(t, srv, "preflight")
				for _, c := range []struct {
					name string
					edit func(*S3Config)
					want string
				}{
					{"wrong secret", func(c *S3Config) { c.SecretKey = "wrong" }, "rejected the credentials"},
					{"missing bucket", func(c *S3Config) { c.URL = "s3://nosuchbucket/x" },
						`bucket "nosuchbucket" does not exist`},
					{"unreachable", func(c *S3Config) { c.Endpoint = s3test.FreePort(t) }, "cannot reach the endpoint"},
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
					if d := time.Since(start); d > DefaultTimeout+5*time.Second {
						t.Errorf("%s took %v", c.name, d)
					}
				}
			})
			t.Run("transient errors are retried", func(t *testing.T) {
				cfg := s3config(t, srv, "flaky")
				// A proxy that answers every other request with 503 Slow Down.
				target, _ := url.Parse("http://" + srv.Endpoint)
				proxy := httputil.NewSingleHostReverseProxy(target)
				var requests, failed atomic.Int64
				flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if requests.Add(1)%2 == 1 {
						failed.Add(1)
						w.WriteHeader(http.StatusServiceUnavailable)
						io.WriteString(w, "<Error><Code>SlowDown</Code><Message>try again</Message></Error>")
						return
					}
					proxy.ServeHTTP(w, r)
				}))
				defer flaky.Close()
				cfg.Endpoint = strings.TrimPrefix(flaky.URL, "http://")
				s, err := OpenS3(ctx, cfg)
				if err != nil {
					t.Fatalf("through a flaky proxy: %v", err)
				}
				data := []byte("survives 503s")
				ref, err := s.Put(ctx, data)
				if err == nil {
					_, err = s.Get(ctx, ref)
				}
				if err != nil || failed.Load() == 0 {
					t.Fatalf("put/get through the flaky proxy: %v (%d requests failed)", err, failed.Load())
				}
			})
			t.Run("create-only", func(t *testing.T) {
				cfg := s3config(t, srv, "createonly")
				s, err := OpenS3(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				// 16 racing writes of one name: one wins, its bytes stay.
				var wg sync.WaitGroup
				errs := make([]error, 16)
				for i := range errs {
					wg.Go(func() { errs[i] = s.PutNew(ctx, "markers/m", []byte(fmt.Sprint("writer ", i))) })
				}
				wg.Wait()
				winner := -1
				for i, err := range errs {
					switch {
					case err == nil && winner < 0:
						winner = i
					case err == nil:
						t.Errorf("writers %d and %d both created the object", winner, i)
					case !errors.Is(err, ErrExists):
						t.Errorf("writer %d: %v", i, err)
					}
				}
				if got, err := s.GetNamed(ctx, "markers/m"); winner < 0 || err != nil ||
					string(got) != fmt.Sprint("writer ", winner) {
					t.Errorf("the object holds %q (%v); the winner was writer %d", got, err, winner)
				}
				if err := s.CheckCreateOnly(ctx, "probes/create-only"); err != nil {
					t.Errorf("CheckCreateOnly on %s: %v", srv.Name, err)
				}
				if names, err := s.List(ctx, ""); err != nil || !slices.Contains(names, "markers/m") ||
					!slices.Contains(names, "probes/create-only") {
					t.Errorf("List: %v %v", names, err)
				}
				// A server that answers a create-only write of a taken name
				// with success is refused.
				target, _ := url.Parse("http://" + srv.Endpoint)
				proxy := httputil.NewSingleHostReverseProxy(target)
				proxy.ModifyResponse = func(r *http.Response) error {
					if r.StatusCode == http.StatusPreconditionFailed {
						r.StatusCode, r.Body, r.ContentLength = http.StatusOK, io.NopCloser(strings.NewReader("")), 0
						r.Header.Del("Content-Length")
					}
					return nil
				}
				lax := httptest.NewServer(proxy)
				defer lax.Close()
				cfg.Endpoint = strings.TrimPrefix(lax.URL, "http://")
				if s, err = OpenS3(ctx, cfg); err != nil {
					t.Fatal(err)
				}
				if err := s.CheckCreateOnly(ctx, "probes/create-only"); err == nil ||
					!strings.Contains(err.Error(), "does not honour create-only writes") {
					t.Errorf("CheckCreateOnly through a server that ignores If-None-Match: %v", err)
				}
			})
			t.Run("named objects", func(t *testing.T) {
				s, err := OpenS3(ctx, s3config(t, srv, "named"))
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
				// An object larger than any ump names there (a bucket writer's
				// 2 GiB commit.json) is refused unread; so is a blob larger
				// than its ref says.
				s.maxNamed = 4
				if _, err := s.GetNamed(ctx, "manifests/m"); !errors.Is(err, ErrCorrupt) ||
					!strings.Contains(err.Error(), "is 5 bytes, more than the 4 ump reads there") {
					t.Errorf("a named object over the limit: %v; want ErrCorrupt naming its size", err)
				}
				ref, err := s.Put(ctx, []byte("twelve bytes"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Get(ctx, Ref{Digest: ref.Digest, Size: 3}); !errors.Is(err, ErrCorrupt) ||
					!strings.Contains(err.Error(), "is 12 bytes, more than the 3") {
					t.Errorf("a blob larger than its ref: %v; want ErrCorrupt", err)
				}
			})
		})
	}
}
