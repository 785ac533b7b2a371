// Package s3kit holds what the stores kept in an S3-compatible bucket
// (spill/s3 and session/attachments/s3) share: the rule for a key
// prefix, the check that the bucket exists, how their options apply and
// how an I/O failure is reported. Each error names the package it is
// reported for (pkg, such as "spill/s3").
package s3kit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/go-harness/harness"
)

// Prefix returns the prefix a store's Config.Prefix asks for: def for
// "", none (the bucket's root) for "/", and otherwise prefix itself, which
// must be a relative name ending in "/" without empty, "." or ".."
// segments; any other prefix is an error of pkg's Config.
func Prefix(pkg, prefix, def string) (string, error) {
	switch prefix {
	case "":
		return def, nil
	case "/":
		return "", nil
	}
	bad := !strings.HasSuffix(prefix, "/") || strings.HasPrefix(prefix, "/")
	for _, seg := range strings.Split(strings.TrimSuffix(prefix, "/"), "/") {
		bad = bad || seg == "" || seg == "." || seg == ".."
	}
	if bad {
		return "", &harness.Error{Code: harness.CodeInvalidOption, Message: fmt.Sprintf(
			"%s: Config.Prefix is %q: a prefix is \"/\" (the bucket's root) or a relative name ending in \"/\", without empty, \".\" or \"..\" segments", pkg, prefix)}
	}
	return prefix, nil
}

// CheckBucket returns an error unless bucket exists.
func CheckBucket(ctx context.Context, client *minio.Client, pkg, bucket string) error {
	ok, err := client.BucketExists(ctx, bucket)
	if err != nil {
		return IOError(pkg, "checking bucket "+bucket, err)
	}
	if !ok {
		return &harness.Error{Code: harness.CodeNotFound, Message: fmt.Sprintf("%s: bucket %q does not exist; create it first", pkg, bucket)}
	}
	return nil
}

// IOError reports that what failed with err: ctx's own error when the
// context ended, else a *harness.Error with code io.
func IOError(pkg, what string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %s: %w", pkg, what, err)
	}
	return &harness.Error{Code: harness.CodeIO, Err: err, Message: pkg + ": " + what + ": " + err.Error()}
}
