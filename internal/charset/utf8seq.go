package charset

// UTF8SeqLen returns the length of the character at the start of p (len(p)
// > 0) as MariaDB's utf8mb3 (maxLen 3) and utf8mb4 (maxLen 4) check it, or
// 0 where p does not start with one: no overlong forms, nothing above
// U+10FFFF, but UTF-8 encoded surrogates (ED A0..BF ..), which those
// charsets store and Go's UTF-8 check refuses. ascii is maxLen 1.
func UTF8SeqLen(p []byte, maxLen int) int {
	cont := func(i int) bool { return i < len(p) && p[i]&0xc0 == 0x80 }
	switch c := p[0]; {
	case c < 0x80:
		return 1
	case c >= 0xc2 && c <= 0xdf && maxLen >= 2:
		if cont(1) {
			return 2
		}
	case c >= 0xe0 && c <= 0xef && maxLen >= 3:
		if cont(1) && cont(2) && (c >= 0xe1 || p[1] >= 0xa0) {
			return 3
		}
	case c >= 0xf0 && c <= 0xf4 && maxLen >= 4:
		if cont(1) && cont(2) && cont(3) && (c >= 0xf1 || p[1] >= 0x90) && (c <= 0xf3 || p[1] <= 0x8f) {
			return 4
		}
	}
	return 0
}

// UTF8Chars counts the characters of b as UTF8SeqLen reads them; ok is
// false where b is not made of such characters.
func UTF8Chars(b []byte, maxLen int) (n int, ok bool) {
	for i := 0; i < len(b); n++ {
		k := UTF8SeqLen(b[i:], maxLen)
		if k == 0 {
			return n, false
		}
		i += k
	}
	return n, true
}
