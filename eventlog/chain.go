package eventlog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// ChainHash is the hash an event's successor carries as Prev: hex SHA-256
// of the event's stored form.
func ChainHash(stored []byte) string {
	sum := sha256.Sum256(stored)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:])
}

// ChainBreak is the first broken link of a run's hash chain.
type ChainBreak struct {
	Seq    uint64 // the event whose link is broken (0: the position could not be read)
	Reason string
}

func (b *ChainBreak) Error() string {
	return fmt.Sprintf("event %d: %s", b.Seq, b.Reason)
}

// VerifyChain checks a run's stored events, in order: each decodes, its
// sequence number follows its predecessor's, and it names its
// predecessor's hash. first is the sequence number the first event must
// carry and prev the hash it must name: 1 and "" for a whole run, a pruned
// run's anchor otherwise. It returns nil when the chain holds.
func VerifyChain(stored [][]byte, first uint64, prev string) *ChainBreak {
	want := first
	for _, b := range stored {
		e, err := DecodeEvent(b)
		if err != nil {
			return &ChainBreak{Seq: want, Reason: "cannot be decoded: " + err.Error()}
		}
		if e.Seq != want {
			return &ChainBreak{Seq: e.Seq, Reason: fmt.Sprintf("sequence number %d where %d was due", e.Seq, want)}
		}
		if e.Prev != prev {
			return &ChainBreak{Seq: e.Seq, Reason: "does not name its predecessor's hash"}
		}
		prev = ChainHash(b)
		want++
	}
	return nil
}
