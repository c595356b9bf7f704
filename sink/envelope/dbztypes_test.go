package envelope

import (
	"math"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
)

// TestDebeziumDeclaredTypes: typeName, jdbcType, length and scale as
// Debezium's MySQL DDL parser tests expect them (debezium aad55199 =
// 3.6.1 for this code, BinlogAntlrDdlParserTest and
// MySqlAntlrDdlParserTest; the test each comes from is named), with the
// declaration as binlogcdc's schema history keeps it
// (change.ColumnDef.Declared).
func TestDebeziumDeclaredTypes(t *testing.T) {
	for _, tc := range []struct {
		decl, typeName string
		jdbc           int
		length, scale  int
		from           string
	}{
		{"INTEGER", "INTEGER", 4, -1, -1, "shouldParseMultipleAddColumnsWithRepeatedInstantAlgorithm"},
		{"int UNSIGNED", "INT UNSIGNED", 4, -1, -1, "shouldParseCreateTableStatementWithSignedTypes"},
		{"BIGINT SIGNED", "BIGINT SIGNED", -5, -1, -1, "shouldParseCreateTableStatementWithSignedTypes"},
		{"bigint(20)", "BIGINT", -5, 20, -1, "shouldParseCreateTableStatementWithMultipleColumnsForPrimaryKey"},
		{"bigint(20) UNSIGNED ZEROFILL", "BIGINT UNSIGNED ZEROFILL", -5, 20, -1, "shouldProcessMultipleSignedUnsignedForTable"},
		{"decimal(10, 2) UNSIGNED ZEROFILL", "DECIMAL UNSIGNED ZEROFILL", 3, 10, 2, "shouldProcessMultipleSignedUnsignedForTable"},
		{"float UNSIGNED ZEROFILL", "FLOAT UNSIGNED ZEROFILL", 6, -1, -1, "shouldProcessMultipleSignedUnsignedForTable"},
		{"double precision(18, 4) UNSIGNED ZEROFILL", "DOUBLE PRECISION UNSIGNED ZEROFILL", 8, 18, 4, "shouldProcessMultipleSignedUnsignedForTable"},
		{"smallint UNSIGNED ZEROFILL", "SMALLINT UNSIGNED ZEROFILL", 5, -1, -1, "shouldProcessMultipleSignedUnsignedForTable"},
		{"DOUBLE PRECISION(20,2)", "DOUBLE PRECISION", 8, 20, 2, "shouldParseCreateTableWithDoublePrecisionKeyword"},
		{"DOUBLE PRECISION", "DOUBLE PRECISION", 8, -1, -1, "shouldParseCreateTableWithDoublePrecisionKeyword"},
		{"TEXT(20)", "TEXT", 12, 20, -1, "shouldParseCreateTableWithTextType"},
		{"TEXT", "TEXT", 12, -1, -1, "shouldParseCreateTableWithTextType"},
		{"INT(11)", "INT", 4, 11, -1, "shouldParseAlterTableThatChangesMultipleColumns"},
		{"INT(10) UNSIGNED", "INT UNSIGNED", 4, 10, -1, "shouldParseCreateAndAlterWithOnUpdate"},
		{"tinyint(3) UNSIGNED", "TINYINT UNSIGNED", -6, 3, -1, "shouldParseCreateAndAlterWithOnUpdate"},
		{"BIT", "BIT", -7, 1, -1, "shouldParseCreateTableWithBitDefaultLength"},
		{"BIT(2)", "BIT", -7, 2, -1, "shouldParseCreateTableWithBitDefault"},
		{"DEC", "DEC", 3, 10, 0, "parseDdlForUnscaledDecAndFixed"},
		{"DEC(2)", "DEC", 3, 2, 0, "parseDdlForDecAndFixed"},
		{"FIXED(1)", "FIXED", 3, 1, 0, "parseDdlForDecAndFixed"},
		{"NUMERIC", "NUMERIC", 2, 10, 0, "parseDdlForUnscaledDecAndFixed"},
		{"NUMERIC(3)", "NUMERIC", 2, 3, 0, "parseDdlForDecAndFixed"},
		{"char(4)", "CHAR", 1, 4, -1, "shouldParseTimeWithNowDefault"},
		{"CHAR(60) BINARY", "CHAR BINARY", 1, 60, -1, "shouldParseCreateUserTable"},
		{"VARCHAR(60) BINARY", "VARCHAR BINARY", 12, 60, -1, "shouldParseNonBinaryStringWithBinaryCollationAsString"},
		{"TINYTEXT BINARY", "TINYTEXT BINARY", 12, -1, -1, "shouldParseNonBinaryStringWithBinaryCollationAsString"},
		{"BINARY(16)", "BINARY", -2, 16, -1, "shouldNotDuplicateBinaryTypeName"},
		{"VARBINARY(32)", "VARBINARY", -3, 32, -1, "shouldNotDuplicateBinaryTypeName"},
		{"MEDIUMBLOB", "MEDIUMBLOB", 2004, -1, -1, "shouldParseStatementForDbz200"},
		{"DATETIME", "DATETIME", 93, -1, -1, "shouldParseTimeWithNowDefault"},
		{"FLOAT", "FLOAT", 6, -1, -1, "shouldParseAlterTableStatementAddColumns"},
		{"NATIONAL VARCHAR(255)", "NATIONAL VARCHAR", -9, 255, -1, "shouldParseStatementForDbz142"},
		{"NATIONAL CHARACTER VARYING(255)", "NATIONAL CHARACTER VARYING", -9, 255, -1, "shouldParseStatementForDbz142"},
		{"NCHAR(10)", "NCHAR", -15, 10, -1, "shouldParseStatementForDbz142"},
		{"NATIONAL CHAR", "NATIONAL CHAR", -15, 1, -1, "shouldSupportNationalChar"},
		{"SERIAL", "BIGINT UNSIGNED", -5, -1, -1, "shouldProcessSerialDatatype"},
		{"CHAR VARYING(10)", "CHAR VARYING", 12, 10, -1, "shouldAllowCharacterVarying (jdbcType)"},
		{"CHARACTER VARYING(10)", "CHARACTER VARYING", 12, 10, -1, "shouldAllowCharacterVarying (jdbcType)"},
		{"NCHAR VARYING(10)", "NCHAR VARYING", -9, 10, -1, "shouldAllowCharacterVarying (jdbcType)"},
		{"MIDDLEINT", "MIDDLEINT", 4, -1, -1, "shouldParseOtherDbDatatypes (jdbcType)"},
		{"FLOAT4", "FLOAT4", 6, -1, -1, "shouldParseOtherDbDatatypes (jdbcType)"},
		{"FLOAT8", "FLOAT8", 8, -1, -1, "shouldParseOtherDbDatatypes (jdbcType)"},
		{"INT1", "INT1", -6, -1, -1, "shouldParseOtherDbDatatypes (jdbcType)"},
		{"INT8", "INT8", -5, -1, -1, "shouldParseOtherDbDatatypes (jdbcType)"},
		{"LONG", "LONG", 12, -1, -1, "shouldParseOtherDbDatatypes (jdbcType)"},
		{"LONG VARCHAR", "LONG VARCHAR", 12, -1, -1, "shouldParseOtherDbDatatypes (jdbcType)"},
		{"LONG VARBINARY", "LONG VARBINARY", 2004, -1, -1, "shouldParseOtherDbDatatypes (jdbcType)"},
		// Not asserted by a parser test; from the data type table of
		// MySqlAntlrDdlParser (Types.BOOLEAN, REAL, NUMERIC).
		{"BOOL", "BOOL", 16, -1, -1, "MySqlAntlrDdlParser data types"},
		{"boolean", "BOOLEAN", 16, -1, -1, "MySqlAntlrDdlParser data types"},
		{"REAL", "REAL", 7, -1, -1, "MySqlAntlrDdlParser data types"},
		{"datetime(0)", "DATETIME", 93, 0, -1, "ColumnDefinitionParserListener typeDatetimePrecision"},
	} {
		d, ok := parseDeclared(tc.decl)
		if !ok || d.typeName != tc.typeName || d.jdbc != tc.jdbc || d.length != tc.length || d.scale != tc.scale {
			t.Errorf("%s (%s): %q %d %d,%d ok=%v, want %q %d %d,%d", tc.decl, tc.from, d.typeName, d.jdbc, d.length, d.scale, ok,
				tc.typeName, tc.jdbc, tc.length, tc.scale)
		}
	}
	for _, decl := range []string{"", "FOO", "INT(x)", "DECIMAL(1,2,3)", "INT UNSIGNED INT", "INT(3"} {
		if d, ok := parseDeclared(decl); ok {
			t.Errorf("%q: %+v, want not described", decl, d)
		}
	}
}

// FuzzDebeziumColumn: any declaration and DEFAULT operand the schema
// history may hold gives a column without a panic, and a described
// declaration has a type name and lengths of -1 or more.
func FuzzDebeziumColumn(f *testing.F) {
	for _, s := range []string{"INT(11) UNSIGNED", "INT(-5)", "DEC(99999999999,1)", "double precision(18, 4) UNSIGNED ZEROFILL", "SERIAL", "(", "INT()", "DEC(,)", "'it''s'", "x'0F'", "0x", "-", "_utf8'"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, decl, def string) {
		if d, ok := parseDeclared(decl); ok && (d.typeName == "" || d.length < -1 || d.scale < -1 || d.length > math.MaxInt32 || d.scale > math.MaxInt32) {
			t.Errorf("%q: %+v", decl, d)
		}
		defaultExpression(&change.ColumnDef{Default: def, HasDefault: true})
	})
}
