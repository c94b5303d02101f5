package blob

import (
	"fmt"
	"net/url"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Client returns the S3 client the store sends its requests with, set up
// from its S3Config (credentials, region, endpoint, addressing, timeouts).
// Other users of the same bucket, such as the object-store connector,
// share this set-up rather than building their own.
func (s *S3Store) Client() *s3.Client { return s.client }

// Bucket returns the name of the store's bucket.
func (s *S3Store) Bucket() string { return s.bucket }

// Prefix returns the prefix put before every key: "" or a key ending in
// "/".
func (s *S3Store) Prefix() string { return s.prefix }

// ParseS3URL reads an s3://bucket/prefix URL, with the query parameters
// and environment variables Open documents, into an S3Config. It does no
// I/O. Its errors name the location.
func ParseS3URL(location string) (S3Config, error) {
	u, err := url.Parse(location)
	if err != nil {
		return S3Config{}, fmt.Errorf("%q: %w", location, err)
	}
	if u.Scheme != "s3" {
		return S3Config{}, fmt.Errorf("%q: not an s3:// URL", location)
	}
	if u.User != nil {
		return S3Config{}, fmt.Errorf("%q: credentials do not belong in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", location)
	}
	cfg, err := s3ConfigFromURL(u, os.Getenv)
	if err != nil {
		return cfg, fmt.Errorf("%q: %w", location, err)
	}
	return cfg, nil
}
