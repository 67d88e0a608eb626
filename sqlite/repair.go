package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlstore"
)

// MoveAside moves the state file at path, with its WAL and shared-memory
// files and its damage mark, to path.damaged-TIMESTAMP (each 0600), where
// it is kept for a post-mortem; a new state can then be started at path.
// It returns the new name of the file.
func MoveAside(path string, now time.Time) (string, error) {
	aside := path + ".damaged-" + now.UTC().Format("20060102T150405.000Z")
	if err := os.Rename(path, aside); err != nil {
		return "", err
	}
	os.Chmod(aside, 0o600)
	for _, suffix := range []string{"-wal", "-shm"} {
		if os.Rename(path+suffix, aside+suffix) == nil {
			os.Chmod(aside+suffix, 0o600)
		}
	}
	if os.Rename(markPath(path), aside+".mark") == nil {
		os.Chmod(aside+".mark", 0o600)
	}
	return aside, nil
}

// maxRunID bounds a run id taken from damaged bytes.
const maxRunID = 512

// RunsIn returns the run ids that the stored events in the files name,
// read from their bytes without SQLite: a damaged file's pages still hold
// the events it held, whatever its header and B-tree pages say. Each
// event's stored form is JSON that names its run ("run":"ID"); an id is
// taken only when it decodes as a JSON string. Missing files are skipped.
func RunsIn(paths ...string) ([]string, error) {
	seen := map[string]bool{}
	key := []byte(`"run":"`)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for i := bytes.Index(b, key); i >= 0; {
			start := i + len(key) - 1 // the opening quote
			if id, ok := jsonString(b[start:]); ok {
				seen[id] = true
			}
			next := bytes.Index(b[i+1:], key)
			if next < 0 {
				break
			}
			i += 1 + next
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	slices.Sort(out)
	return out, nil
}

// jsonString decodes the JSON string b starts with, if it ends within
// maxRunID bytes and holds a usable run id.
func jsonString(b []byte) (string, bool) {
	for j := 1; j < len(b) && j <= maxRunID; j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			var s string
			if json.Unmarshal(b[:j+1], &s) != nil || s == "" || !utf8.ValidString(s) {
				return "", false
			}
			return s, true
		}
	}
	return "", false
}

// Probe proves that the open store at path can take a write: the write
// lock within the busy timeout, and room on its disk. A refusal is a
// *veto.StateError naming its cause (locked, full).
func Probe(ctx context.Context, s *sqlstore.Store, path string) error {
	tx, err := s.DB().BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		return refusal(path, err)
	}
	tx.Rollback()
	if lowSpace(path) {
		return &veto.StateError{Cause: veto.CauseFull, Path: path, Detail: "less than 64 KiB free on its disk"}
	}
	return nil
}

// minFree is the room on the disk below which Probe calls a state full.
const minFree = 64 << 10

// Refusal is err as the *veto.StateError of the state at path.
func Refusal(path string, err error) *veto.StateError { return veto.StateErrorOf(refusal(path, err)) }
