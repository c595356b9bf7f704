package recovery

import (
	"github.com/binlogcdc/binlogcdc/internal/sqllex"
	"github.com/binlogcdc/binlogcdc/schemahist"
)

// The DDL model (what a statement does to tables, and the table a CREATE
// or ALTER TABLE leaves) lives in package schemahist, which the stream's
// schema history shares; these are its names here.

type (
	token     = sqllex.Token
	tableName = sqllex.TableName
	shape     = schemahist.Shape
	alterInfo = schemahist.AlterInfo
	colOp     = schemahist.ColOp
)

const (
	tWord  = sqllex.Word
	tPunct = sqllex.Punct

	actCreate   = schemahist.ActCreate
	actDrop     = schemahist.ActDrop
	actTruncate = schemahist.ActTruncate
	actRename   = schemahist.ActRename
	actAlter    = schemahist.ActAlter
	actDropDB   = schemahist.ActDropDB

	opRename = schemahist.OpRename
	opAdd    = schemahist.OpAdd
	opDrop   = schemahist.OpDrop
)

var (
	lex              = sqllex.Lex
	parseDDL         = schemahist.ParseDDL
	fromTableMap     = schemahist.FromTableMap
	shapeFromCreate  = schemahist.ShapeFromCreate
	withVisibility   = schemahist.WithVisibility
	defaultCollation = schemahist.DefaultCollation
	encodeText       = schemahist.EncodeText
)
