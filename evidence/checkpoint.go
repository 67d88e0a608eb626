package evidence

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// Checkpoint is a signed statement of the decision log: checkpoint N
// names the hash of checkpoint N-1 (Prev, "" for the first) and the heads
// of the runs that moved since N-1, each the run's last event then.
// Events is how many events those heads moved by. Its stored form, the
// bytes signed, is its JSON as encoding/json writes it; the hash of a
// checkpoint is the hex SHA-256 of those bytes.
type Checkpoint struct {
	V      int       `json:"v"`
	N      uint64    `json:"n"`
	Prev   string    `json:"prev"`
	Time   time.Time `json:"time"`
	Key    string    `json:"key"`
	Events uint64    `json:"events"`
	Heads  []Head    `json:"heads"`
}

// Head is a run's last event as a checkpoint signs it: its sequence
// number and eventlog.ChainHash of its stored bytes.
type Head struct {
	Run  string `json:"run"`
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// signedPrefix separates a checkpoint's signatures from any other use of
// the key.
const signedPrefix = "veto checkpoint v1\n"

// Hash is a checkpoint's hash: hex SHA-256 of its stored bytes.
func Hash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// Sign returns the signature of a checkpoint's stored bytes, in base64.
func Sign(key ed25519.PrivateKey, body []byte) string {
	msg := append([]byte(signedPrefix), body...)
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))
}

// VerifySig reports whether sig (base64) is pub's signature of body.
func VerifySig(pub ed25519.PublicKey, body []byte, sig string) bool {
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || len(raw) != ed25519.SignatureSize {
		return false
	}
	msg := append([]byte(signedPrefix), body...)
	return ed25519.Verify(pub, msg, raw)
}
