package rowevent

// arena is scratch space for the text that decoding produces (temporal and
// decimal text, charset-converted strings, JSON text). Values slice into
// it. When it grows, earlier slices keep the old backing array alive, so
// they stay valid; reset only between rows events, once the caller is done
// with the Changes.
type arena struct {
	buf []byte
	// lazyUTF8 is Decoder.LazyUTF8 (decodeString reads it here).
	lazyUTF8 bool
}

func (a *arena) reset() { a.buf = a.buf[:0] }

// start returns the current length, to be passed to since.
func (a *arena) start() int { return len(a.buf) }

// since returns what was appended after start, capped so that a later
// append cannot write into it.
func (a *arena) since(start int) []byte { return a.buf[start:len(a.buf):len(a.buf)] }
