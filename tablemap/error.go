package tablemap

import (
	"errors"
	"fmt"
)

// ErrNoColumnNames is wrapped by *MetadataError.
var ErrNoColumnNames = errors.New("tablemap: TABLE_MAP_EVENT carries no column names")

// MetadataError reports a TABLE_MAP_EVENT whose optional metadata is not
// FULL, so column names (and more) are unknown. binlogcdc never guesses
// them from a live schema: the schema may have changed since.
type MetadataError struct {
	DB, Table     string
	File          string
	Offset        uint64
	ServerVersion string
	Err           error
}

func (e *MetadataError) Error() string {
	where := ""
	if e.File != "" {
		where = fmt.Sprintf("%s:%d: ", e.File, e.Offset)
	}
	server := e.ServerVersion
	if server == "" {
		server = "unknown version"
	}
	return fmt.Sprintf("%stable %s.%s: the binlog has no column names for it (written by server %s): "+
		"binlog_row_metadata is not FULL. Fix: run SET GLOBAL binlog_row_metadata = FULL "+
		"(and set it in the server's config; MariaDB's default is NO_LOG, MySQL's MINIMAL; "+
		"it needs MySQL 8.0.1+ or MariaDB 10.5+). The fix only affects binlogs written afterwards: "+
		"events already written cannot be decoded by name",
		where, e.DB, e.Table, server)
}

func (e *MetadataError) Unwrap() error { return e.Err }

// FormatError reports a TABLE_MAP_EVENT that could not be decoded.
type FormatError struct {
	Err error
}

func (e *FormatError) Error() string { return "tablemap: corrupt TABLE_MAP_EVENT: " + e.Err.Error() }
func (e *FormatError) Unwrap() error { return e.Err }
