package blob

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Open returns the store a location names, as a user writes it after
// --state-dir:
//
//   - a plain path, or a file:///absolute/path URL: a directory (Dir),
//     which may be on a shared file system;
//   - s3://bucket or s3://bucket/prefix: an S3-compatible object store
//     (NewS3), with the query parameters endpoint=URL, region=NAME and
//     path-style=true|false. Credentials come from the environment
//     variables AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and (for
//     temporary ones) AWS_SESSION_TOKEN; the region defaults to
//     AWS_REGION, then AWS_DEFAULT_REGION, then us-east-1. Path-style
//     addressing defaults to true when an endpoint is given (self-hosted
//     servers rarely have the wildcard DNS the other style needs) and to
//     false for AWS itself;
//   - memory://: a new, empty in-memory store (Memory).
//
// Credentials are never taken from the URL, so that it can be logged.
// For S3, Open checks that the bucket exists and the credentials are
// accepted before it returns, so that a wrong location fails at start
// rather than at the first checkpoint. Every error names the location
// and says what is wrong with it.
func Open(ctx context.Context, location string) (Store, error) {
	if location == "" {
		return nil, fmt.Errorf("checkpoint store: empty location")
	}
	scheme, _, isURL := strings.Cut(location, "://")
	if !isURL {
		if strings.HasPrefix(location, "file:") {
			return nil, fmt.Errorf("checkpoint store %q: a file URL is file:///absolute/path", location)
		}
		return Dir(location), nil
	}
	u, err := url.Parse(location)
	if err != nil {
		return nil, fmt.Errorf("checkpoint store %q: %w", location, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("checkpoint store %q: %s", location, fmt.Sprintf(format, args...))
	}
	if u.User != nil {
		return nil, bad("credentials do not belong in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	switch strings.ToLower(scheme) {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, bad("file URLs name a local path (file:///path), not host %q", u.Host)
		}
		if u.Path == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, bad("a file URL is file:///absolute/path")
		}
		return Dir(u.Path), nil
	case "memory":
		if u.Host != "" || u.Path != "" || u.RawQuery != "" {
			return nil, bad("an in-memory store is just memory://")
		}
		return Memory(), nil
	case "s3":
		cfg, err := s3ConfigFromURL(u, os.Getenv)
		if err != nil {
			return nil, bad("%v", err)
		}
		s, err := NewS3(cfg)
		if err != nil {
			return nil, bad("%v", err)
		}
		if err := s.Check(ctx); err != nil {
			return nil, bad("%v", err)
		}
		return s, nil
	}
	return nil, bad("unknown scheme %q: use a path, file:///path, s3://bucket/prefix or memory://", scheme)
}

// s3ConfigFromURL reads an s3:// URL and the AWS environment variables
// (through getenv) into an S3Config.
func s3ConfigFromURL(u *url.URL, getenv func(string) string) (S3Config, error) {
	cfg := S3Config{
		Bucket:       u.Host,
		Prefix:       strings.Trim(u.Path, "/"),
		AccessKey:    getenv("AWS_ACCESS_KEY_ID"),
		SecretKey:    getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken: getenv("AWS_SESSION_TOKEN"),
		Region:       getenv("AWS_REGION"),
	}
	if cfg.Bucket == "" {
		return cfg, fmt.Errorf("no bucket: write s3://bucket/prefix")
	}
	if u.Fragment != "" {
		return cfg, fmt.Errorf("unexpected fragment #%s", u.Fragment)
	}
	if cfg.Region == "" {
		cfg.Region = getenv("AWS_DEFAULT_REGION")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return cfg, fmt.Errorf("query: %w", err)
	}
	pathStyle := ""
	for name, vals := range q {
		if len(vals) != 1 {
			return cfg, fmt.Errorf("parameter %s given %d times", name, len(vals))
		}
		switch v := vals[0]; name {
		case "endpoint":
			e, err := url.Parse(v)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return cfg, fmt.Errorf("endpoint %q is not an http:// or https:// URL", v)
			}
			cfg.Endpoint = v
		case "region":
			cfg.Region = v
		case "path-style":
			pathStyle = v
		default:
			return cfg, fmt.Errorf("unknown parameter %q (known: endpoint, region, path-style)", name)
		}
	}
	cfg.PathStyle = cfg.Endpoint != ""
	if pathStyle != "" {
		b, err := strconv.ParseBool(pathStyle)
		if err != nil {
			return cfg, fmt.Errorf("path-style=%q is not true or false", pathStyle)
		}
		cfg.PathStyle = b
	}
	if cfg.Prefix != "" {
		if err := ValidKey(cfg.Prefix); err != nil {
			return cfg, fmt.Errorf("prefix: %w", err)
		}
	}
	return cfg, nil
}
