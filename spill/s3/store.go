package s3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/go-harness/harness/internal/spillname"

	"github.com/minio/minio-go/v7"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/s3kit"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
)

// store is the spill.Store New returns.
type store struct {
	client   *minio.Client
	bucket   string
	prefix   string
	partSize uint64
}

var _ spill.Store = (*store)(nil)

// Config configures the store New returns. The zero value is the
// default.
type Config struct {
	// Prefix is where in the bucket the store keeps its objects: "" means
	// "spill/", and "/" the bucket's root. Another prefix lets a bucket
	// hold other data, or the outputs of several deployments; it must be
	// a relative name ending in "/", without empty, "." or ".." segments.
	Prefix string
}

// New returns a spill.Store keeping outputs in bucket, which must exist.
// It is safe for concurrent use, also by several processes sharing the
// bucket. Besides Save and Open it reads a window of a saved output's
// lines with ranged requests, for the read tool (package tools/files),
// which looks for a store's method
//
//	ReadWindow(ctx context.Context, locator string, w fs.Window) (*fs.Text, error)
//
// and uses it when the session's output store has it.
func New(ctx context.Context, client *minio.Client, bucket string, cfg Config) (spill.Store, error) {
	if client == nil {
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: "spill/s3: New needs a client (minio.New)"}
	}
	prefix, err := s3kit.Prefix(pkg, cfg.Prefix, "spill/")
	if err != nil {
		return nil, err
	}
	s := &store{client: client, bucket: bucket, prefix: prefix, partSize: 5 << 20}
	if err := s3kit.CheckBucket(ctx, client, pkg, bucket); err != nil {
		return nil, err
	}
	return s, nil
}

// pkg names the package in its errors.
const pkg = "spill/s3"

func ioErr(what string, err error) error { return s3kit.IOError(pkg, what, err) }

// locatorKey is the form of every key Save makes, relative to the
// prefix; Open refuses anything else.
var locatorKey = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}-[0-9a-f]{8}/[A-Za-z0-9_-]{1,64}-[A-Za-z0-9_-]{1,64}-[0-9a-f]{16}\.txt$`)

// errReader records the first error of the reader it wraps, so that Save
// reports the reader's own error and not the client's account of it.
type errReader struct {
	r   io.Reader
	ctx context.Context
	err error
}

func (r *errReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return 0, err
	}
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// Save implements tools.OutputStore: r is streamed to a new object.
func (s *store) Save(ctx context.Context, owner tools.Owner, r io.Reader) (tools.Stored, error) {
	if err := ctx.Err(); err != nil {
		return tools.Stored{}, err
	}
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return tools.Stored{}, err
	}
	rel := spillname.SessionDir(owner.Session) + "/" + spillname.Sanitize(owner.Tool, 64) + "-" + spillname.Sanitize(owner.Call, 64) + "-" + hex.EncodeToString(suffix[:]) + ".txt"
	er := &errReader{r: r, ctx: ctx}
	ix := newIndexer()
	info, err := s.client.PutObject(ctx, s.bucket, s.prefix+rel, io.TeeReader(er, ix), -1, minio.PutObjectOptions{
		ContentType: "application/octet-stream",
		PartSize:    s.partSize,
	})
	if err != nil {
		// Nothing of a failed upload stays: a multipart upload is
		// aborted, a single part never completed.
		switch {
		case er.err != nil:
			return tools.Stored{}, fmt.Errorf("spill/s3: saving output: %w", er.err)
		case ctx.Err() != nil:
			return tools.Stored{}, ctx.Err()
		}
		return tools.Stored{}, ioErr("saving output", err)
	}
	// Without its index an output is still whole; reading it is slower.
	if err := s.saveIndex(ctx, s.prefix+rel, ix.done()); err != nil {
		_ = s.client.RemoveObject(context.WithoutCancel(ctx), s.bucket, s.prefix+rel, minio.RemoveObjectOptions{})
		return tools.Stored{}, ioErr("saving output", err)
	}
	return tools.Stored{Locator: tools.OutputScheme + rel, Size: info.Size}, nil
}

func notFound(locator string) error {
	return &harness.Error{Code: harness.CodeNotFound, Message: "spill/s3: no saved output " + locator +
		" (it may have been removed by retention; locators come from spill notices and must be used exactly as given)"}
}

// Open implements tools.OutputStore. The reader fetches the object with
// ranged requests as it is read (it is an io.ReaderAt and io.Seeker too),
// so closing it early downloads no more.
func (s *store) Open(ctx context.Context, locator string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rel, ok := strings.CutPrefix(locator, tools.OutputScheme)
	if !ok || !locatorKey.MatchString(rel) {
		return nil, notFound(fmt.Sprintf("%q", locator))
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.prefix+rel, minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Stat()
		if err != nil {
			obj.Close()
		}
	}
	if err != nil {
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil, notFound(locator)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, ioErr("opening "+locator, err)
	}
	return obj, nil
}

// DeleteSession implements spill.Store.
func (s *store) DeleteSession(ctx context.Context, session string) error {
	return s.remove(ctx, s.prefix+spillname.SessionDir(session)+"/", func(minio.ObjectInfo) bool { return true }, nil)
}

// Expire implements spill.Store, by the objects' modification times
// (which S3 keeps to the second).
func (s *store) Expire(ctx context.Context, cutoff time.Time) (int, error) {
	n := 0
	err := s.remove(ctx, s.prefix, func(o minio.ObjectInfo) bool { return o.LastModified.Before(cutoff) }, &n)
	return n, err
}

// remove deletes the objects under prefix that keep selects, counting
// them in n when n is not nil.
func (s *store) remove(ctx context.Context, prefix string, keep func(minio.ObjectInfo) bool, n *int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	victims := make(chan minio.ObjectInfo)
	var listErr error
	go func() {
		defer close(victims)
		for o := range s.client.ListObjects(lctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			if o.Err != nil {
				listErr = o.Err
				return
			}
			if !keep(o) {
				continue
			}
			select {
			case victims <- o:
			case <-lctx.Done():
				return
			}
		}
	}()
	var errs []error
	removed := 0
	counting := make(chan minio.ObjectInfo)
	go func() {
		defer close(counting)
		for o := range victims {
			if !strings.HasSuffix(o.Key, ".lines") {
				removed++ // an output, not its line index
			}
			counting <- o
		}
	}()
	for e := range s.client.RemoveObjects(ctx, s.bucket, counting, minio.RemoveObjectsOptions{}) {
		if e.Err != nil {
			errs = append(errs, e.Err)
		}
	}
	// Every object handed over was acted on; those that failed are not
	// counted.
	if n != nil {
		*n = removed - len(errs)
	}
	if listErr != nil {
		errs = append(errs, listErr)
	}
	if err := errors.Join(errs...); err != nil {
		return ioErr("removing outputs", err)
	}
	return ctx.Err()
}
