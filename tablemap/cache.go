package tablemap

import (
	"errors"

	"github.com/go-mysql-org/go-mysql/replication"
)

// PeekName reads the table id and names from a TABLE_MAP_EVENT body without
// decoding the rest, so that filtered-out tables cost next to nothing and
// never raise metadata errors.
//
//	# bytes   field
//	4/6       table id
//	2         flags
//	1         database name length n
//	n+1       database name, NUL
//	1         table name length m
//	m+1       table name, NUL
//	…         columns, metadata (see FromEvent)
func PeekName(body []byte, tableIDSize int) (id uint64, db, table string, err error) {
	p := tableIDSize + 2
	if len(body) < p+1 {
		return 0, "", "", &FormatError{Err: errors.New("cut short before the database name")}
	}
	for i := 0; i < tableIDSize; i++ {
		id |= uint64(body[i]) << (8 * i)
	}
	n := int(body[p])
	p++
	if len(body) < p+n+2 {
		return 0, "", "", &FormatError{Err: errors.New("cut short in the database name")}
	}
	db = string(body[p : p+n])
	p += n + 1
	m := int(body[p])
	p++
	if len(body) < p+m {
		return 0, "", "", &FormatError{Err: errors.New("cut short in the table name")}
	}
	table = string(body[p : p+m])
	return id, db, table, nil
}

// Cache keeps the Tables built from TABLE_MAP_EVENT bodies. Servers send
// the same TABLE_MAP before every transaction that touches a table, so
// each distinct body is decoded once.
type Cache struct {
	m map[string]*Table
}

// maxCached bounds the cache; it is cleared when full.
const maxCached = 4096

func NewCache() *Cache { return &Cache{m: map[string]*Table{}} }

// Lookup returns the Table already built from this exact TABLE_MAP_EVENT
// body, or nil. It allocates nothing.
func (c *Cache) Lookup(body []byte, tableIDSize int) *Table {
	t := c.m[string(body)]
	if t == nil || len(body) < tableIDSize {
		return nil
	}
	var id uint64
	for i := 0; i < tableIDSize; i++ {
		id |= uint64(body[i]) << (8 * i)
	}
	if id != t.ID { // the same bytes read with another table id size
		return nil
	}
	return t
}

// Get returns the Table for a TABLE_MAP_EVENT body, calling decode and
// FromEvent on a miss. tableIDSize is as for PeekName.
func (c *Cache) Get(body []byte, tableIDSize int, decode func() (*replication.TableMapEvent, error)) (*Table, error) {
	if t, ok := c.m[string(body)]; ok {
		return t, nil
	}
	te, err := decode()
	if err != nil {
		return nil, err
	}
	t, err := FromEventBody(te, body, tableIDSize)
	if err != nil {
		return nil, err
	}
	if len(c.m) >= maxCached {
		clear(c.m)
	}
	c.m[string(body)] = t
	return t, nil
}
