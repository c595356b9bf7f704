package rowevent

import (
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// CellDecoder decodes single cells given in the binlog's row-image
// format, with the same code (and so to the same values) as rows events.
// The snapshot uses it to turn what a SELECT returns into the value the
// binlog would give for the same row. The zero value is ready to use.
type CellDecoder struct{ a arena }

// Decode decodes one non-NULL cell; data must hold exactly that cell.
// The value's bytes stay valid until Reset.
func (d *CellDecoder) Decode(data []byte, col *tablemap.Column) (change.Value, error) {
	v, n, err := decodeCell(&d.a, data, col)
	if err != nil {
		return change.Value{}, err
	}
	if n != len(data) {
		return change.Value{}, &CellError{Column: col.Name, Type: col.Type, Err: errBadValue("%d bytes left after the cell", len(data)-n)}
	}
	return v, nil
}

// SetLazyUTF8 is Decoder.LazyUTF8 for the cells decoded from now on.
func (d *CellDecoder) SetLazyUTF8(on bool) { d.a.lazyUTF8 = on }

// Reset lets the decoder reuse its memory: values from before are invalid.
func (d *CellDecoder) Reset() { d.a.reset() }
