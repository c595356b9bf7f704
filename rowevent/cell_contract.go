package rowevent

// The cell decoder contract (implemented in cell.go and friends):
//
//	func decodeCell(a *arena, data []byte, col *tablemap.Column) (v change.Value, n int, err error)
//
// data starts at the cell's first byte and runs to the end of the row
// image (it may hold more cells after this one). decodeCell returns the
// value and the number of bytes it used. It never reads past len(data)
// and never panics: short or malformed input returns an error
// (*CellError) and n = 0. NULL cells never reach it (the null bitmap is
// handled by the caller).
