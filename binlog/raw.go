package binlog

import (
	"context"

	"github.com/go-mysql-org/go-mysql/replication"
)

// NextRaw returns the next event exactly as the server sent it: header,
// body and checksum, without the packet's OK byte. Artificial events
// (the ROTATE and FORMAT_DESCRIPTION_EVENT at the start of a dump) and
// heartbeats come too; nothing is framed, checked or flattened. The bytes
// stay valid until the next call. Use Next or NextRaw on a source, not
// both. binlogcdc archive writes these bytes into its copy of the files.
func (s *LiveSource) NextRaw(ctx context.Context) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if err := s.watch(ctx); err != nil {
		s.err = err
		return nil, err
	}
	raw, err := s.d.event()
	if err != nil {
		s.err = s.readError(ctx, err)
		return nil, s.err
	}
	return raw, nil
}

// VerifyChecksum checks the CRC32 trailer of a whole event (see
// verifyCRC32: a FORMAT_DESCRIPTION_EVENT's in-use flag is not covered).
func VerifyChecksum(raw []byte) error { return verifyCRC32(raw) }

// FDEChecksum decodes a whole FORMAT_DESCRIPTION_EVENT and reports
// whether the events of its file carry a CRC32 trailer.
func FDEChecksum(raw []byte) (bool, error) {
	if len(raw) < HeaderSize {
		return false, errShortFDE
	}
	fde, err := decodeFDE(raw[HeaderSize:])
	if err != nil {
		return false, err
	}
	return fde.ChecksumAlgorithm == replication.BINLOG_CHECKSUM_ALG_CRC32, nil
}

var errShortFDE = &protocolError{msg: "corrupt FORMAT_DESCRIPTION_EVENT: shorter than an event header"}
