package change

import "github.com/binlogcdc/binlogcdc/tablemap"

// SchemaKind is what a DDL statement did to one table or database, in
// the names Maxwell gives its DDL records.
type SchemaKind uint8

const (
	TableCreate SchemaKind = iota + 1
	TableAlter             // ALTER TABLE, RENAME TABLE, CREATE/DROP INDEX
	TableDrop
	DatabaseCreate
	DatabaseAlter
	DatabaseDrop
)

func (k SchemaKind) String() string {
	switch k {
	case TableCreate:
		return "table-create"
	case TableAlter:
		return "table-alter"
	case TableDrop:
		return "table-drop"
	case DatabaseCreate:
		return "database-create"
	case DatabaseAlter:
		return "database-alter"
	case DatabaseDrop:
		return "database-drop"
	}
	return "unknown"
}

// SchemaChange is one table or database a DDL statement changed, as the
// schema history saw it (pipeline.Options.Schema): Change.Schema.
type SchemaChange struct {
	Kind SchemaKind
	// DB and Table name it (for a rename: the old name; Table is "" for a
	// database).
	DB, Table string
	// Charset is, for DatabaseCreate and DatabaseAlter, the character set
	// the statement names, or the server's default for a CREATE DATABASE
	// that names none (when the binlog logs it); "" when not known.
	Charset string
	// Old is the table before the statement, New after it; nil when the
	// history does not know it (and New is nil for a drop, Old for a
	// create).
	Old, New *TableDef
}

// TableDef is a table as the schema history defines it.
type TableDef struct {
	// Table holds the name, the columns with their types, and the
	// primary key (PKNames).
	Table *tablemap.Table
	// Charset is the table's default character set ("" when not known).
	Charset string
	// Columns are what the DDL says beyond the types, one per
	// Table.Columns.
	Columns []ColumnDef
}

// ColumnDef is what the DDL says about a column beyond its type.
type ColumnDef struct {
	// TypeName is the type's name when the binlog type cannot tell it
	// (MariaDB UUID, INET4, INET6); "" otherwise.
	TypeName string
	// Declared is the type as the DDL declared it: its words as written,
	// its arguments, then SIGNED, UNSIGNED, ZEROFILL and BINARY as MySQL
	// applies them ("integer(11) UNSIGNED ZEROFILL", "double
	// precision(20,2)", "char(60) BINARY"); "" for ENUM, SET, the types of
	// TypeName, and columns the history did not read from DDL.
	Declared string
	// Default is the DEFAULT clause's operand as written ("'x'", "0",
	// "current_timestamp()"); HasDefault is false when there is none.
	Default    string
	HasDefault bool
	// AutoIncrement: AUTO_INCREMENT. OnUpdate: ON UPDATE (CURRENT_TIMESTAMP).
	AutoIncrement, OnUpdate bool
	// Generated is "VIRTUAL" or "STORED" for a generated column.
	Generated string
	// Comment is the COMMENT's text, "" when none.
	Comment string
}
