// Package clock is the clock of the output formats' processing times,
// which tests fix.
package clock

import "time"

// Now returns the current time; tests replace it.
var Now = time.Now
