// Package conformance holds tests only: it decodes binlogs written by real
// MySQL and MariaDB servers (collected from public projects' test data in
// ../shared/fixtures/upstream, next to the repository; see its
// MANIFEST.md) through the public APIs — binlog sources, the pipeline,
// the table map and the JSON lines sink — and checks the decoded values
// against what the upstream projects assert and what mariadb-binlog
// prints for the same bytes.
//
// The fixture files are read in place and never copied into this
// repository. The tests fail, rather than skip, when they are missing.
package conformance
