package sqltext

import "strings"

// IsTriggerDDL reports whether a DDL statement creates or drops a trigger:
// CREATE [OR REPLACE] [DEFINER = user] TRIGGER, DROP TRIGGER. Replay
// leaves these out by default: the binlog already holds every row the
// source's triggers wrote, so a trigger on the target would write them a
// second time.
func IsTriggerDDL(sql string) bool {
	w := words(sql, 3)
	if len(w) < 2 {
		return false
	}
	switch w[0] {
	case "DROP":
		return w[1] == "TRIGGER"
	case "CREATE":
	default:
		return false
	}
	// After CREATE: OR REPLACE, DEFINER = user, then TRIGGER (or something
	// else). Skip the definer, which words() cannot read.
	rest := afterWord(sql, "CREATE")
	for {
		w := words(rest, 1)
		if len(w) == 0 {
			return false
		}
		switch w[0] {
		case "TRIGGER":
			return true
		case "OR", "REPLACE":
			rest = afterWord(rest, w[0])
		case "DEFINER":
			rest = skipDefiner(afterWord(rest, "DEFINER"))
		default:
			return false
		}
	}
}

// afterWord returns sql after the first occurrence of the keyword word
// (case-insensitive) as words() finds it.
func afterWord(sql, word string) string {
	i := strings.Index(strings.ToUpper(sql), word)
	if i < 0 {
		return ""
	}
	return sql[i+len(word):]
}

// skipDefiner skips "= user" where user is CURRENT_USER[()], or a name
// and host each quoted with ` ' " or bare: `a`@`b`, 'a'@'%', a@localhost.
func skipDefiner(s string) string {
	s = strings.TrimLeft(s, " \t\r\n")
	s = strings.TrimPrefix(s, "=")
	s = strings.TrimLeft(s, " \t\r\n")
	part := func(s string) string {
		if s == "" {
			return s
		}
		if q := s[0]; q == '`' || q == '\'' || q == '"' {
			for i := 1; i < len(s); i++ {
				if s[i] == q {
					if i+1 < len(s) && s[i+1] == q {
						i++
						continue
					}
					return s[i+1:]
				}
			}
			return ""
		}
		end := strings.IndexAny(s, " \t\r\n@")
		if end < 0 {
			return ""
		}
		return s[end:]
	}
	s = part(s)
	if strings.HasPrefix(s, "@") {
		s = part(s[1:])
	}
	return s
}
