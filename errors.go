package binlogcdc

// UsageError is a mistake in the options: a value that cannot work,
// found before anything was written. Msg says what is wrong (naming the
// command-line flag of the option), Hint how to fix it.
type UsageError struct{ Msg, Hint string }

// Error returns Msg.
func (e UsageError) Error() string { return e.Msg }
