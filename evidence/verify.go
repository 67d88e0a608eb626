package evidence

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vetohq/veto/eventlog"
)

// MaxLine is the longest line Parse reads: a checkpoint of MaxHeads heads
// of long run ids fits.
const MaxLine = 4 << 20

// maxSeq bounds the sequence numbers Parse takes, so that no sum of them
// wraps.
const maxSeq = 1 << 62

// Parsed is an export as read: its runs' chains and its checkpoints,
// nothing checked yet but the form of each line.
type Parsed struct {
	Run   string    // the header's run: the export is of this run only ("": every run)
	Since time.Time // the header's time: the export is of events from then on (zero: all)
	Runs  []*RunChain
	// Checkpoints in the order of the export.
	Checkpoints []ParsedCheckpoint
}

// RunChain is one run's chain in an export.
type RunChain struct {
	Run    string
	First  uint64 // the sequence number of its first event
	Prev   string // the hash its first event names
	Stored [][]byte
	Seqs   []uint64 // the sequence number each event's line gives
}

// ParsedCheckpoint is a checkpoint line: its stored bytes verbatim, its
// signature, and the bytes decoded (Bad: why they do not decode).
type ParsedCheckpoint struct {
	Line int
	Body []byte
	Sig  string
	CP   Checkpoint
	Bad  string
}

type exportLine struct {
	Export     *int            `json:"veto_export"`
	Run        *string         `json:"run"`
	Since      string          `json:"since"`
	First      *uint64         `json:"first"`
	Prev       *string         `json:"prev"`
	Seq        *uint64         `json:"seq"`
	Event      json.RawMessage `json:"event"`
	EventB64   *string         `json:"event_b64"`
	Checkpoint json.RawMessage `json:"checkpoint"`
	Sig        *string         `json:"sig"`
}

// Parse reads an export. The input is untrusted: a line that is not one
// of the export's kinds, too long, or out of place is an error naming its
// line number.
func Parse(r io.Reader) (*Parsed, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), MaxLine)
	p := &Parsed{}
	byRun := map[string]*RunChain{}
	n := 0
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var l exportLine
		if err := json.Unmarshal(b, &l); err != nil {
			return nil, fmt.Errorf("line %d: not JSON", n)
		}
		if n == 1 {
			if l.Export == nil || *l.Export != 1 {
				return nil, fmt.Errorf("line 1: not the header of a veto log export (version 1)")
			}
			if l.Run != nil {
				p.Run = *l.Run
			}
			if l.Since != "" {
				t, err := time.Parse(time.RFC3339Nano, l.Since)
				if err != nil {
					return nil, fmt.Errorf("line 1: the header's since is not a time")
				}
				p.Since = t
			}
			continue
		}
		switch {
		case l.Export != nil:
			return nil, fmt.Errorf("line %d: a second header", n)
		case l.Checkpoint != nil:
			if l.Sig == nil || l.Run != nil || l.Seq != nil {
				return nil, fmt.Errorf("line %d: a checkpoint line holds a checkpoint and its sig only", n)
			}
			pc := ParsedCheckpoint{Line: n, Body: bytes.Clone(l.Checkpoint), Sig: *l.Sig}
			dec := json.NewDecoder(bytes.NewReader(pc.Body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&pc.CP); err != nil {
				pc.Bad = "its body is not a checkpoint"
			}
			p.Checkpoints = append(p.Checkpoints, pc)
		case l.Run == nil:
			return nil, fmt.Errorf("line %d: neither an event, a run's start nor a checkpoint", n)
		case l.First != nil:
			if l.Prev == nil || l.Seq != nil || l.Event != nil || l.EventB64 != nil {
				return nil, fmt.Errorf("line %d: a run's start holds its run, first and prev only", n)
			}
			if *l.First == 0 || *l.First > maxSeq {
				return nil, fmt.Errorf("line %d: a run's first event is numbered from 1 to %d", n, uint64(maxSeq))
			}
			if _, dup := byRun[*l.Run]; dup {
				return nil, fmt.Errorf("line %d: run %q starts twice", n, *l.Run)
			}
			rc := &RunChain{Run: *l.Run, First: *l.First, Prev: *l.Prev}
			byRun[rc.Run] = rc
			p.Runs = append(p.Runs, rc)
		case l.Seq != nil:
			rc := byRun[*l.Run]
			if rc == nil {
				return nil, fmt.Errorf("line %d: an event of run %q before the run's start", n, *l.Run)
			}
			var stored []byte
			switch {
			case l.Event != nil && l.EventB64 == nil:
				stored = bytes.Clone(l.Event)
			case l.Event == nil && l.EventB64 != nil:
				var err error
				if stored, err = base64.StdEncoding.DecodeString(*l.EventB64); err != nil {
					return nil, fmt.Errorf("line %d: event_b64 is not base64", n)
				}
			default:
				return nil, fmt.Errorf("line %d: an event line holds one of event and event_b64", n)
			}
			if len(rc.Stored) >= maxSeq {
				return nil, fmt.Errorf("line %d: too many events in run %q", n, *l.Run)
			}
			rc.Stored = append(rc.Stored, stored)
			rc.Seqs = append(rc.Seqs, *l.Seq)
		default:
			return nil, fmt.Errorf("line %d: neither an event, a run's start nor a checkpoint", n)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", n+1, MaxLine)
		}
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("empty: not a veto log export")
	}
	return p, nil
}

// Report is what Verify found.
type Report struct {
	Runs, Events, Checkpoints int
	// Failures name each event (run and sequence number) or checkpoint
	// that does not hold; none: the export verifies.
	Failures []string
	// Uncovered is how many events come after their run's last signed
	// head: true to the chain, but no signature vouches for them yet.
	Uncovered int
	// Before is how many signed heads lie before where the export starts
	// (pruned, or before --since) and so could not be compared.
	Before int
	// Notes say what the export does not show (where a run or the
	// checkpoint chain starts later than its beginning).
	Notes []string
}

// OK reports whether nothing failed.
func (r *Report) OK() bool { return len(r.Failures) == 0 }

// MaxFailures is the most failures a report lists; the rest are counted.
const MaxFailures = 50

func (r *Report) fail(format string, args ...any) {
	switch {
	case len(r.Failures) < MaxFailures:
		r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
	case len(r.Failures) == MaxFailures:
		r.Failures = append(r.Failures, "more failures are not listed")
	}
}

// Verify checks a parsed export with the signers' public keys (more than
// one when a key was rotated; a checkpoint names its key's id): each run's
// hash chain (eventlog.VerifyChain), each checkpoint's signature, that
// each checkpoint names the one before it, and that every head a
// checkpoint signs is the event the export holds at that place. Run ids
// in messages are quoted (%q): they are data from the export.
func Verify(p *Parsed, pubs ...ed25519.PublicKey) *Report {
	r := &Report{Runs: len(p.Runs), Checkpoints: len(p.Checkpoints)}
	keys := map[string]ed25519.PublicKey{}
	var ids []string
	for _, k := range pubs {
		keys[KeyID(k)] = k
		ids = append(ids, KeyID(k))
	}
	type chainState struct {
		rc     *RunChain
		hashes map[uint64]string // ChainHash of each stored event, by the sequence number its line gives
		broken bool
		signed uint64 // the highest sequence number a valid checkpoint signed
	}
	runs := map[string]*chainState{}
	// The header is not signed: what it narrows is said, so that a header
	// changed to excuse a removed run or checkpoint shows.
	if p.Run != "" {
		r.Notes = append(r.Notes, fmt.Sprintf("the export says it is of run %q only: other runs the checkpoints name are not looked for", p.Run))
	}
	if !p.Since.IsZero() {
		r.Notes = append(r.Notes, fmt.Sprintf("the export says it is of the log from %s: what came before is not looked for", p.Since.UTC().Format(time.RFC3339)))
	}
	for _, rc := range p.Runs {
		cs := &chainState{rc: rc, hashes: make(map[uint64]string, len(rc.Stored))}
		runs[rc.Run] = cs
		r.Events += len(rc.Stored)
		for i, b := range rc.Stored {
			if _, dup := cs.hashes[rc.Seqs[i]]; !dup {
				cs.hashes[rc.Seqs[i]] = eventlog.ChainHash(b)
			}
		}
		for i := range rc.Stored {
			if want := rc.First + uint64(i); rc.Seqs[i] != want {
				r.fail("run %q: event %d: its line says event %d where %d was due (an event removed, added or moved)", rc.Run, want, rc.Seqs[i], want)
				cs.broken = true
				break
			}
		}
		if cs.broken {
			continue
		}
		if b := eventlog.VerifyChain(rc.Stored, rc.First, rc.Prev); b != nil {
			cs.broken = true
			switch {
			case strings.HasPrefix(b.Reason, "sequence number"):
				r.fail("run %q: event %d: %s (an event removed, or two swapped)", rc.Run, expectedAt(rc, b), b.Reason)
			case strings.HasPrefix(b.Reason, "does not name") && b.Seq > rc.First:
				r.fail("run %q: event %d was changed, or event %d does not follow it: event %d does not name its hash", rc.Run, b.Seq-1, b.Seq, b.Seq)
			case strings.HasPrefix(b.Reason, "does not name"):
				r.fail("run %q: event %d does not name the hash its run's start gives", rc.Run, b.Seq)
			default:
				r.fail("run %q: event %d %s", rc.Run, b.Seq, b.Reason)
			}
		}
		if rc.First > 1 || rc.Prev != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("run %q starts at event %d (pruned before, or exported from a time)", rc.Run, rc.First))
		}
	}

	var prev *ParsedCheckpoint
	for i := range p.Checkpoints {
		pc := &p.Checkpoints[i]
		name := fmt.Sprintf("checkpoint %d", pc.CP.N)
		if pc.Bad != "" {
			r.fail("checkpoint on line %d: %s", pc.Line, pc.Bad)
			prev = nil
			continue
		}
		valid := true
		switch {
		case pc.CP.V != 1:
			r.fail("%s: version %d, not 1", name, pc.CP.V)
			valid = false
		case keys[pc.CP.Key] == nil:
			r.fail("%s: signed by key %q, not by this public key (%s)", name, pc.CP.Key, strings.Join(ids, ", "))
			valid = false
		case !VerifySig(keys[pc.CP.Key], pc.Body, pc.Sig):
			r.fail("%s: its signature does not verify (the checkpoint or its signature was changed)", name)
			valid = false
		}
		switch {
		case prev == nil && i == 0 && pc.CP.N == 1 && pc.CP.Prev != "":
			r.fail("%s: the first checkpoint names a predecessor", name)
		case prev == nil && i == 0 && pc.CP.N > 1 && p.Since.IsZero():
			r.fail("%s: the first checkpoint of an export of the whole log, where checkpoint 1 was due (checkpoints removed)", name)
		case prev == nil && i == 0 && pc.CP.N > 1:
			r.Notes = append(r.Notes, fmt.Sprintf("the checkpoints start at %s (exported from a time)", name))
		case prev == nil && i > 0:
			r.fail("%s: follows a checkpoint that could not be read", name)
		case prev != nil && pc.CP.N != prev.CP.N+1:
			r.fail("%s: follows checkpoint %d (a checkpoint removed, added or moved)", name, prev.CP.N)
		case prev != nil && pc.CP.Prev != Hash(prev.Body):
			r.fail("%s: does not name checkpoint %d's hash", name, prev.CP.N)
		}
		prev = pc
		if !valid {
			continue
		}
		for _, h := range pc.CP.Heads {
			cs := runs[h.Run]
			if cs == nil {
				if p.Run == "" && p.Since.IsZero() {
					r.fail("run %q: %s signs its event %d, and the export does not hold the run (a run removed)", h.Run, name, h.Seq)
				}
				continue
			}
			rc := cs.rc
			got, held := cs.hashes[h.Seq]
			switch {
			case held && got != h.Hash:
				r.fail("run %q: event %d does not match %s's signed hash (the event was changed, or another is in its place)", rc.Run, h.Seq, name)
			case held:
			case h.Seq+1 < rc.First:
				r.Before++
			case h.Seq+1 == rc.First:
				if h.Hash != rc.Prev {
					r.fail("run %q: event %d, where the export starts, does not match %s's signed hash", rc.Run, h.Seq, name)
				}
			default:
				r.fail("run %q: event %d, signed by %s, is not in the export (removed)", rc.Run, h.Seq, name)
			}
			cs.signed = max(cs.signed, h.Seq)
		}
	}
	for _, rc := range p.Runs {
		cs := runs[rc.Run]
		last := rc.First + uint64(len(rc.Stored)) - 1
		if last+1 > rc.First && last > cs.signed {
			r.Uncovered += int(last - max(cs.signed, rc.First-1))
		}
	}
	return r
}

// expectedAt is the sequence number due where a chain broke on one.
func expectedAt(rc *RunChain, b *eventlog.ChainBreak) uint64 {
	var due uint64
	if _, err := fmt.Sscanf(b.Reason, "sequence number %d where %d was due", new(uint64), &due); err == nil {
		return due
	}
	return b.Seq
}
