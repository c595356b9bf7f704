package metrics

import (
	"errors"
	"sync/atomic"
	"time"
)

// Live verification (stream --verify-every, verify/live): its passes,
// the differences found, and the last result for /healthz.

// verifyState is a Stream's record of the verification passes.
type verifyState struct {
	on                        atomic.Bool // VerifyOn was called: the metrics are served
	runs, differences, errors atomic.Uint64
	lastOK                    atomic.Int64 // when the last pass found every table equal (unix ns; 0: never)
	chunks                    atomic.Uint64
	// The last pass's longest pause of the applier (ns) and its tables
	// not compared (not transactional).
	pauseMax, unverified atomic.Int64
	// bad is why the last pass did not prove the copy equal (nil: it
	// did, or none ran yet): /healthz fails with it.
	bad atomic.Pointer[string]
}

// VerifyOn makes the verification metrics part of /metrics.
func (s *Stream) VerifyOn() {
	if s != nil {
		s.verify.on.Store(true)
	}
}

// VerifyEqual records a pass that found every table equal.
func (s *Stream) VerifyEqual() {
	if s == nil {
		return
	}
	s.verify.runs.Add(1)
	s.verify.lastOK.Store(s.clock().UnixNano())
	s.verify.bad.Store(nil)
}

// VerifyDiffer records a pass that found n tables differing; reason
// says which (for /healthz).
func (s *Stream) VerifyDiffer(n int, reason string) {
	if s == nil {
		return
	}
	s.verify.runs.Add(1)
	s.verify.differences.Add(uint64(n))
	s.verify.bad.Store(&reason)
}

// VerifyFailed records a pass that could not compare (a server
// unreachable, a query refused): the copy is not proven equal.
func (s *Stream) VerifyFailed(err error) {
	if s == nil {
		return
	}
	s.verify.errors.Add(1)
	msg := "the last verification pass failed: " + err.Error()
	s.verify.bad.Store(&msg)
}

// VerifyChunk records a chunk (a key range of a table, or a whole
// table) compared in its own pair of snapshots.
func (s *Stream) VerifyChunk() {
	if s != nil {
		s.verify.chunks.Add(1)
	}
}

// VerifyPassEnd records, at the end of a pass that compared, the longest
// time the applier waited for one chunk's snapshots and the number of
// tables not verified (not transactional).
func (s *Stream) VerifyPassEnd(pauseMax time.Duration, unverified int) {
	if s != nil {
		s.verify.pauseMax.Store(int64(pauseMax))
		s.verify.unverified.Store(int64(unverified))
	}
}

// verifyHealth is the last pass's failure, if any.
func (s *Stream) verifyHealth() error {
	if p := s.verify.bad.Load(); p != nil {
		return errors.New(*p)
	}
	return nil
}

// verifyLastOK is when the last equal pass ended (Unix seconds; 0: never).
func (s *Stream) verifyLastOK() float64 {
	ns := s.verify.lastOK.Load()
	if ns == 0 {
		return 0
	}
	return float64(time.Duration(ns)) / float64(time.Second)
}
