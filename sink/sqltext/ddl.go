package sqltext

import (
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
)

// SessionSQLMode is the sql_mode replayed statements run under: strict
// (a value the target cannot store exactly is an error, not a warning),
// zero and invalid dates accepted as the source stored them, and 0 stored
// as 0 in AUTO_INCREMENT columns.
const SessionSQLMode = "STRICT_ALL_TABLES,NO_AUTO_VALUE_ON_ZERO,ALLOW_INVALID_DATES,NO_ENGINE_SUBSTITUTION"

// NonStrictSQLMode is SessionSQLMode without strict mode: the sql_mode
// of a statement that stores an ENUM error value (see EnumErrors).
const NonStrictSQLMode = "NO_AUTO_VALUE_ON_ZERO,ALLOW_INVALID_DATES,NO_ENGINE_SUBSTITUTION"

// SessionSetup are the statements that prepare a target session.
var SessionSetup = []string{
	"SET NAMES utf8mb4",
	"SET SESSION time_zone = '+00:00', foreign_key_checks = 0, sql_mode = '" + SessionSQLMode + "'",
}

// IsDrop reports whether a DDL statement drops data: DROP TABLE, DROP
// DATABASE / SCHEMA, TRUNCATE (what --keep-dropped skips).
func IsDrop(sql string) bool {
	w := words(sql, 3)
	if len(w) == 0 {
		return false
	}
	switch w[0] {
	case "TRUNCATE":
		return true
	case "DROP":
		if len(w) < 2 {
			return false
		}
		switch w[1] {
		case "TABLE", "DATABASE", "SCHEMA":
			return true
		case "TEMPORARY":
			return len(w) > 2 && w[2] == "TABLE"
		}
	}
	return false
}

// words returns the statement's first n keywords, upper-cased, skipping
// white space and comments (but not the text of executable comments
// /*!…*/ and /*M!…*/, whose content counts).
func words(sql string, n int) []string {
	var out []string
	s := sql
	for len(out) < n {
		s = strings.TrimLeft(s, " \t\r\n")
		switch {
		case strings.HasPrefix(s, "/*!") || strings.HasPrefix(s, "/*M!"):
			s = strings.TrimLeft(s[strings.IndexByte(s, '!')+1:], "0123456789")
			continue
		case strings.HasPrefix(s, "/*"):
			end := strings.Index(s, "*/")
			if end < 0 {
				return out
			}
			s = s[end+2:]
			continue
		case strings.HasPrefix(s, "#") || strings.HasPrefix(s, "-- "):
			nl := strings.IndexByte(s, '\n')
			if nl < 0 {
				return out
			}
			s = s[nl+1:]
			continue
		case strings.HasPrefix(s, "*/"):
			s = s[2:]
			continue
		}
		end := strings.IndexFunc(s, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_')
		})
		if end < 0 {
			end = len(s)
		}
		if end == 0 {
			return out
		}
		out = append(out, strings.ToUpper(s[:end]))
		s = s[end:]
	}
	return out
}

// DatabaseDDL reports whether a statement is CREATE, ALTER or DROP
// DATABASE (or SCHEMA). The server logs those with the database they name
// as their default database, which need not exist on a target: they run
// without switching to it.
func DatabaseDDL(sql string) bool {
	w := words(sql, 2)
	return len(w) == 2 && (w[0] == "CREATE" || w[0] == "ALTER" || w[0] == "DROP") && (w[1] == "DATABASE" || w[1] == "SCHEMA")
}

// DDLDB is the database a replayed DDL statement runs in: its default
// database, or "" for none: CREATE/ALTER/DROP DATABASE, and statements
// that name every table with its database (a target that holds only the
// selected tables may not have the source session's default database).
func DDLDB(c *change.Change) string {
	if c.Touches != nil && c.Touches.OwnDB || DatabaseDDL(c.SQL) {
		return ""
	}
	return c.DB
}

// NotReplayed says why a DDL statement is not replayed, or "" when it
// is: account management (users, roles, grants, passwords) is not, unless
// accounts (--replay-accounts: then the pipeline passes its text as
// logged, passwords included).
func NotReplayed(c *change.Change, accounts bool) string {
	if c.Touches != nil && c.Touches.Kind == "account" && !accounts {
		return "account management (users, roles, grants, passwords) is not replayed without --replay-accounts"
	}
	return ""
}

// OneLine shortens a statement for a message or an SQL comment: one
// line, at most n bytes.
func OneLine(sql string, n int) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
