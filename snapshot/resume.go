package snapshot

import (
	"context"
	"fmt"
	"strings"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
)

// CheckResume says why an interrupted snapshot cannot be continued in
// this one ("" when it can): a table it holds in part has another schema
// now, or a DDL statement on the selected tables was logged between the
// first snapshot's position and this one's (applied by the stream to
// rows of which some were read before it and some after, it could not be
// right). Then the snapshot is taken again as a whole.
func (s *Source) CheckResume(ctx context.Context, cfg binlog.LiveConfig, state *ResumeState, tables []TableInfo, filter *pipeline.Filter) (string, error) {
	listed := map[string]bool{}
	for _, ti := range tables {
		listed[tableKey(ti.DB, ti.Name)] = true
	}
	for _, tc := range state.Coverage.Tables() {
		name := tableKey(tc.DB, tc.Table)
		if !listed[name] {
			return fmt.Sprintf("%s is no longer among the selected tables", pipeline.QuoteName(tc.DB, tc.Table)), nil
		}
		if len(tc.Chunks) == 0 {
			continue
		}
		ts, err := loadSchema(s.conn, tc.DB, tc.Table, s.mariadb)
		if err != nil {
			return "", s.err(ctx, "schema", err)
		}
		if state.Schemas[name] != fingerprint(ts.table) {
			return fmt.Sprintf("the schema of %s changed since its first part was copied", pipeline.QuoteName(tc.DB, tc.Table)), nil
		}
	}
	return ddlBetween(ctx, cfg, state.Start, s.Pos.Pos(), filter)
}

// ddlBetween reads the binlog from from to to and describes the first
// DDL statement on the selected tables in it ("" for none).
func ddlBetween(ctx context.Context, cfg binlog.LiveConfig, from, to change.Position, filter *pipeline.Filter) (string, error) {
	if !from.Before(to) {
		return "", nil
	}
	src, err := binlog.DialRemote(ctx, cfg, from, "", to)
	if err != nil {
		return "", fmt.Errorf("snapshot: reading the binlog from %s:%d to %s:%d for DDL: %w", from.File, from.Offset, to.File, to.Offset, err)
	}
	defer src.Close()
	d := &ddlFinder{}
	p := pipeline.New(src, d, pipeline.Options{Filter: filter, DDL: true})
	if err := p.Run(ctx); err != nil {
		if d.found != "" {
			return d.found, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		// A statement the filters cannot place (on selected and other
		// tables at once) is a DDL in the window too.
		if strings.Contains(err.Error(), "touches") {
			return err.Error(), nil
		}
		return "", fmt.Errorf("snapshot: reading the binlog from %s:%d to %s:%d for DDL: %w", from.File, from.Offset, to.File, to.Offset, err)
	}
	return d.found, nil
}

// ddlFinder is a sink that keeps the first DDL that may change rows of
// selected tables, and stops there.
type ddlFinder struct{ found string }

var errFound = fmt.Errorf("snapshot: DDL found")

func (d *ddlFinder) Write(_ context.Context, c *change.Change) error {
	if c.Op != change.DDL || c.Touches == nil {
		return nil
	}
	switch c.Touches.Kind {
	case "routine", "account":
		return nil
	case "database":
		if !strings.HasPrefix(strings.ToUpper(strings.TrimSpace(c.SQL)), "DROP") {
			return nil
		}
	}
	sql := c.SQL
	if len(sql) > 100 {
		sql = sql[:100] + "…"
	}
	d.found = fmt.Sprintf("DDL at %s:%d, between the first snapshot's position and this one: %s", c.Pos.File, c.Pos.Offset, strings.Join(strings.Fields(sql), " "))
	return errFound
}

func (d *ddlFinder) Commit(context.Context, change.TxEnd) error { return nil }
func (d *ddlFinder) Rollback(context.Context) error             { return nil }
func (d *ddlFinder) Close(context.Context) error                { return nil }
