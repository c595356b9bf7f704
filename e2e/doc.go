// Package e2e holds end-to-end tests: they start private MariaDB servers
// (internal/testserver), run workloads on them, decode the binlogs the
// servers wrote (binlog.OpenFiles → pipeline → sink/jsonl) and check the
// JSON output value by value against what the same server returns for the
// same rows. The server is the oracle: expected values come from SELECTs
// (HEX, CAST, ST_AsBinary, information_schema, …), not from hard-coded
// literals alone.
//
// The package has no non-test code besides this comment.
package e2e
