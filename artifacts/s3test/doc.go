// Package s3test starts real S3 servers (versitygw, and MinIO when
// installed) on 127.0.0.1 for tests, stopped when the test ends.
//
// Imports: none of ump's packages.
package s3test
