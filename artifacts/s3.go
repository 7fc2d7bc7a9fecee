package artifacts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3 stores blobs as objects PREFIX/sha256/<2 hex>/<64 hex> of a bucket on
// an S3-compatible server, each with its sha256 in the object's user
// metadata. Transient errors (network, 5xx, throttling) are retried by
// minio-go with exponential backoff and jitter.
type S3 struct {
	client   *minio.Client
	bucket   string
	prefix   string
	endpoint string
	partSize uint64 // objects larger than this upload in parts
	timeout  time.Duration
	maxNamed int64 // the largest named object GetNamed downloads (MaxNamedBytes)
}

// MaxNamedBytes bounds what GetNamed downloads: a named object (a
// registration, a commit, an upload of events, a worklist) is far smaller
// than this; a larger one is not ump's, and is refused unread.
const MaxNamedBytes = 256 << 20

var _ Named = (*S3)(nil)

// S3Config says where the store is and how to reach it.
type S3Config struct {
	URL       string // s3://BUCKET/PREFIX
	Endpoint  string // host:port of the server
	AccessKey string
	SecretKey string
	Insecure  bool // plain HTTP instead of HTTPS
	// Timeout bounds each request, its retries included, plus a second per
	// MiB it moves; 0 means DefaultTimeout. A server that does not answer
	// in time is ErrUnavailable.
	Timeout time.Duration
}

// DefaultTimeout is S3Config.Timeout's default.
const DefaultTimeout = time.Minute

// retries is how many times minio-go retries a transient failure.
const retries = 5

// OpenS3 connects to the store and checks, before anything else runs, that
// the endpoint answers, the credentials are accepted, the bucket exists
// and a blob can be written and read back.
func OpenS3(ctx context.Context, cfg S3Config) (*S3, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("artifact store %q: want s3://BUCKET/PREFIX", cfg.URL)
	}
	if cfg.Endpoint == "" {
		return nil, fmt.Errorf("artifact store %s: set UMP_S3_ENDPOINT to the server's host:port", cfg.URL)
	}
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, fmt.Errorf("artifact store %s: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", cfg.URL)
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:      credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:     !cfg.Insecure,
		MaxRetries: retries,
	})
	if err != nil {
		return nil, fmt.Errorf("artifact store %s at %s: %w", cfg.URL, cfg.Endpoint, err)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	s := &S3{
		client:   client,
		bucket:   u.Host,
		prefix:   prefix,
		endpoint: cfg.Endpoint,
		partSize: 16 << 20,
		timeout:  cfg.Timeout,
		maxNamed: MaxNamedBytes,
	}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if err := s.check(ctx, cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// check is OpenS3's preflight.
func (s *S3) check(ctx context.Context, cfg S3Config) error {
	where := fmt.Sprintf("artifact store %s at %s", cfg.URL, cfg.Endpoint)
	bctx, cancel := s.deadline(ctx, 0)
	ok, err := s.client.BucketExists(bctx, s.bucket)
	err = s.unavailable(ctx, err)
	cancel()
	if errors.Is(err, ErrUnavailable) {
		return fmt.Errorf("%s: %w", where, err)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %s", ErrUnavailable, where, explain(err, cfg))
	}
	if !ok {
		return fmt.Errorf("%w: %s: bucket %q does not exist; create it first", ErrUnavailable, where, s.bucket)
	}
	probe := []byte("ump artifact store probe\n")
	ref, err := s.Put(ctx, probe)
	if err == nil {
		_, err = s.Get(ctx, ref)
	}
	if errors.Is(err, ErrUnavailable) {
		return fmt.Errorf("%s: writing a probe blob: %w", where, err)
	}
	if err != nil {
		return fmt.Errorf(
			"%w: %s: writing and reading back a probe blob failed: %s",
			ErrUnavailable,
			where,
			explain(err, cfg),
		)
	}
	return nil
}

// deadline bounds one request moving n bytes (S3Config.Timeout).
func (s *S3) deadline(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout+time.Duration(n>>20)*time.Second)
}

// unavailable turns a request that ran out of its deadline (not the
// caller's) into ErrUnavailable, saying what to do.
func (s *S3) unavailable(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: the S3 server at %s did not answer within %s (retries included); check that it runs, "+
		"then rerun the same command to resume: %v", ErrUnavailable, s.endpoint, s.timeout, err)
}

// explain turns an S3 failure into what the user should check.
func explain(err error, cfg S3Config) string {
	var netErr net.Error
	var urlErr *url.Error
	switch code := minio.ToErrorResponse(err).Code; {
	case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "AccessDenied":
		return fmt.Sprintf(
			"the server rejected the credentials (%s); check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
			code,
		)
	case errors.As(err, &netErr), errors.As(err, &urlErr), errors.Is(err, context.DeadlineExceeded):
		hint := "check UMP_S3_ENDPOINT"
		if !cfg.Insecure {
			hint += " (and --s3-insecure if the server speaks plain HTTP)"
		}
		return fmt.Sprintf("cannot reach the endpoint: %v; %s", err, hint)
	default:
		return err.Error()
	}
}

func (s *S3) key(ref Ref) (string, error) {
	h, err := ref.hex()
	if err != nil {
		return "", err
	}
	return s.prefix + "sha256/" + h[:2] + "/" + h, nil
}

// Put uploads data (in parts above partSize) and then checks that the
// stored object has the right size and sha256 metadata. It always uploads,
// so a Put over a damaged copy replaces it.
func (s *S3) Put(ctx context.Context, data []byte) (Ref, error) {
	ref := RefOf(data)
	key, _ := s.key(ref)
	h, _ := ref.hex()
	parent := ctx
	ctx, cancel := s.deadline(ctx, len(data))
	defer cancel()
	_, err := s.client.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{
		UserMetadata: map[string]string{"sha256": h},
		ContentType:  "application/octet-stream",
		PartSize:     s.partSize,
	})
	if err != nil {
		return Ref{}, fmt.Errorf(
			"artifact store: uploading %s to s3://%s/%s: %w",
			ref.Digest,
			s.bucket,
			key,
			s.unavailable(parent, err),
		)
	}
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return Ref{}, fmt.Errorf(
			"artifact store: checking the upload of %s: %w",
			ref.Digest,
			s.unavailable(parent, err),
		)
	}
	if info.Size != ref.Size || metadata(info, "sha256") != h {
		return Ref{}, fmt.Errorf("artifact store: upload of %s not verified: server holds %d bytes with sha256 %q",
			ref, info.Size, metadata(info, "sha256"))
	}
	return ref, nil
}

// metadata reads a user metadata value, whatever the server's key case.
func metadata(info minio.ObjectInfo, name string) string {
	for k, v := range info.UserMetadata {
		if strings.EqualFold(strings.TrimPrefix(strings.ToLower(k), "x-amz-meta-"), name) {
			return v
		}
	}
	return ""
}

// download reads an object whole; a missing object is ErrNotFound.
// download reads the object at key whole, if it holds at most limit
// bytes; a larger one is ErrCorrupt, refused before it is read.
func (s *S3) download(ctx context.Context, key string, limit int64) ([]byte, error) {
	sctx, cancel := s.deadline(ctx, 0)
	info, err := s.client.StatObject(sctx, s.bucket, key, minio.StatObjectOptions{})
	cancel()
	if code := minio.ToErrorResponse(err).Code; code == "NoSuchKey" || code == "NotFound" {
		return nil, fmt.Errorf("%w: s3://%s/%s", ErrNotFound, s.bucket, key)
	}
	if err != nil {
		return nil, fmt.Errorf("artifact store: s3://%s/%s: %w", s.bucket, key, s.unavailable(ctx, err))
	}
	tooLarge := func(size int64) error {
		return fmt.Errorf(
			"%w: s3://%s/%s is %d bytes, more than the %d ump reads there: not an object ump wrote",
			ErrCorrupt,
			s.bucket,
			key,
			size,
			limit,
		)
	}
	if info.Size > limit {
		return nil, tooLarge(info.Size)
	}
	gctx, cancel := s.deadline(ctx, int(info.Size))
	defer cancel()
	obj, err := s.client.GetObject(gctx, s.bucket, key, minio.GetObjectOptions{})
	var data []byte
	if err == nil {
		data, err = io.ReadAll(io.LimitReader(obj, limit+1))
		obj.Close()
	}
	if int64(len(data)) > limit { // it grew since it was looked at
		return nil, tooLarge(int64(len(data)))
	}
	if code := minio.ToErrorResponse(err).Code; code == "NoSuchKey" || code == "NotFound" {
		return nil, fmt.Errorf("%w: s3://%s/%s", ErrNotFound, s.bucket, key)
	}
	if err != nil {
		return nil, fmt.Errorf("artifact store: downloading s3://%s/%s: %w", s.bucket, key, s.unavailable(ctx, err))
	}
	return data, nil
}

// Get downloads and verifies a blob.
func (s *S3) Get(ctx context.Context, ref Ref) ([]byte, error) {
	key, err := s.key(ref)
	if err != nil {
		return nil, err
	}
	data, err := s.download(ctx, key, ref.Size)
	if err != nil {
		return nil, err
	}
	if err := verify(ref, data, "s3://"+s.bucket+"/"+key); err != nil {
		return nil, err
	}
	return data, nil
}

func (s *S3) String() string { return fmt.Sprintf("s3://%s/%s at %s", s.bucket, s.prefix, s.endpoint) }

// PutNamed stores data under PREFIX/NAME (not content-addressed: a
// manifest's event index for `ump push`).
func (s *S3) PutNamed(ctx context.Context, name string, data []byte) error {
	rctx, cancel := s.deadline(ctx, len(data))
	defer cancel()
	_, err := s.client.PutObject(
		rctx,
		s.bucket,
		s.prefix+name,
		bytes.NewReader(data),
		int64(len(data)),
		minio.PutObjectOptions{},
	)
	if err != nil {
		return fmt.Errorf(
			"artifact store: uploading s3://%s/%s%s: %w",
			s.bucket,
			s.prefix,
			name,
			s.unavailable(ctx, err),
		)
	}
	return nil
}

// GetNamed reads PREFIX/NAME; a missing object is ErrNotFound.
func (s *S3) GetNamed(ctx context.Context, name string) ([]byte, error) {
	return s.download(ctx, s.prefix+name, s.maxNamed)
}

// ErrExists is returned (wrapped) by PutNew when the object exists.
var ErrExists = errors.New("object exists")

// PutNew stores data under PREFIX/NAME only if no object has that name
// (a create-only write: a single-part PUT with If-None-Match: *, which the
// server checks atomically; CheckCreateOnly says whether it does). It
// returns ErrExists when the name is taken, also when an earlier try of
// this same call created it and its answer was lost: read the object back
// to learn whose it is.
func (s *S3) PutNew(ctx context.Context, name string, data []byte) error {
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", DisableMultipart: true}
	opts.SetMatchETagExcept("*")
	for try := 0; ; try++ {
		rctx, cancel := s.deadline(ctx, len(data))
		_, err := s.client.PutObject(rctx, s.bucket, s.prefix+name, bytes.NewReader(data), int64(len(data)), opts)
		cancel()
		switch minio.ToErrorResponse(err).Code {
		case "":
			if err == nil {
				return nil
			}
		case "PreconditionFailed":
			return fmt.Errorf("%w: s3://%s/%s%s", ErrExists, s.bucket, s.prefix, name)
		case "ConditionalRequestConflict": // a racing write of the same name: ask again
			if try < retries {
				time.Sleep(time.Duration(50<<try) * time.Millisecond)
				continue
			}
		}
		return fmt.Errorf(
			"artifact store: creating s3://%s/%s%s: %w",
			s.bucket,
			s.prefix,
			name,
			s.unavailable(ctx, err),
		)
	}
}

// CheckCreateOnly checks that the server honours create-only writes: a
// second PutNew of PREFIX/NAME must be refused and leave the first
// object's bytes. Servers that ignore If-None-Match would let two machines
// commit the same cell.
func (s *S3) CheckCreateOnly(ctx context.Context, name string) error {
	first := []byte(fmt.Sprintf("ump create-only probe %d\n", time.Now().UnixNano()))
	if err := s.PutNew(ctx, name, first); err != nil && !errors.Is(err, ErrExists) {
		return err
	}
	before, err := s.GetNamed(ctx, name)
	if err != nil {
		return err
	}
	second := append([]byte("overwritten: "), first...)
	err = s.PutNew(ctx, name, second)
	after, rerr := s.GetNamed(ctx, name)
	if rerr != nil {
		return rerr
	}
	if err == nil || !errors.Is(err, ErrExists) || !bytes.Equal(after, before) {
		return fmt.Errorf(
			"%w: the S3 server at %s does not honour create-only writes (If-None-Match: *): a second write of "+
				"s3://%s/%s%s "+
				"was not refused (%v), so two machines could both commit one cell; use a server that does (MinIO, "+
				"versitygw >= 1.8, AWS S3)",
			ErrUnavailable,
			s.endpoint,
			s.bucket,
			s.prefix,
			name,
			err,
		)
	}
	return nil
}

// List returns the names (below PREFIX) of the objects under PREFIX/DIR,
// at any depth, sorted.
func (s *S3) List(ctx context.Context, dir string) ([]string, error) {
	lctx, cancel := s.deadline(ctx, 0)
	defer cancel()
	var names []string
	for obj := range s.client.ListObjects(lctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + dir,
		Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf(
				"artifact store: listing s3://%s/%s%s: %w",
				s.bucket,
				s.prefix,
				dir,
				s.unavailable(ctx, obj.Err),
			)
		}
		names = append(names, strings.TrimPrefix(obj.Key, s.prefix))
	}
	slices.Sort(names)
	return names, nil
}
