//go:build !linux

package snapshot

// catchUpPause: only on Linux (pause_linux.go).
func catchUpPause() {}
