package evidence

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/vetohq/veto/eventlog"
)

// Source is the decision log an export reads (veto.Log's part of it).
type Source interface {
	Runs(ctx context.Context) ([]string, error)
	Chain(ctx context.Context, run string) (first uint64, prev string, stored [][]byte, err error)
}

// ExportOptions select what Export writes. Zero fields select everything.
type ExportOptions struct {
	Run   string    // only this run's events
	Since time.Time // only events (and checkpoints) from this time on
}

// Exported is what an export holds.
type Exported struct {
	Runs, Events, Checkpoints int
}

// Export writes the log's events with its checkpoints as JSON Lines: a
// header, then for each run a line giving where its chain starts followed
// by its events in order, each with its stored bytes verbatim, then the
// checkpoints in order. docs/evidence.md describes the lines.
func Export(ctx context.Context, w io.Writer, src Source, cps Table, o ExportOptions) (Exported, error) {
	bw := bufio.NewWriter(w)
	var got Exported
	// The checkpoints exported are those made before the events are read:
	// a live log's later checkpoint could sign an event read too late.
	upTo, err := cps.Last(ctx)
	if err != nil {
		return got, err
	}
	hdr := []byte(`{"veto_export":1`)
	if o.Run != "" {
		hdr = append(hdr, `,"run":`...)
		hdr = appendString(hdr, o.Run)
	}
	if !o.Since.IsZero() {
		hdr = append(hdr, `,"since":`...)
		hdr = appendString(hdr, o.Since.UTC().Format(time.RFC3339Nano))
	}
	bw.Write(append(hdr, "}\n"...))
	runs := []string{o.Run}
	if o.Run == "" {
		var err error
		if runs, err = src.Runs(ctx); err != nil {
			return got, err
		}
	}
	var line []byte
	for _, run := range runs {
		first, prev, stored, err := src.Chain(ctx, run)
		if err != nil {
			return got, err
		}
		if !o.Since.IsZero() {
			// The run's events from the first at or after Since on: a
			// chain's suffix, which starts from its first event's Prev.
			k := len(stored)
			for i, b := range stored {
				if e, err := eventlog.DecodeEvent(b); err == nil && !e.Time.Before(o.Since) {
					k = i
					break
				}
			}
			if k == len(stored) {
				continue
			}
			if k > 0 {
				e, _ := eventlog.DecodeEvent(stored[k])
				first, prev = first+uint64(k), e.Prev
			}
			stored = stored[k:]
		}
		if len(stored) == 0 && o.Run == "" && first == 1 {
			continue
		}
		got.Runs++
		line = append(line[:0], `{"run":`...)
		line = appendString(line, run)
		line = append(line, `,"first":`...)
		line = strconv.AppendUint(line, first, 10)
		line = append(line, `,"prev":`...)
		line = appendString(line, prev)
		bw.Write(append(line, "}\n"...))
		for i, b := range stored {
			line = append(line[:0], `{"run":`...)
			line = appendString(line, run)
			line = append(line, `,"seq":`...)
			line = strconv.AppendUint(line, first+uint64(i), 10)
			if json.Valid(b) && !bytes.ContainsAny(b, "\r\n") {
				line = append(line, `,"event":`...)
				line = append(line, b...)
			} else {
				// Bytes that are not one line of JSON (a damaged event)
				// go as base64, still as stored, so the chain's hashes
				// are computed over what the database holds.
				line = append(line, `,"event_b64":"`...)
				line = base64.StdEncoding.AppendEncode(line, b)
				line = append(line, '"')
			}
			bw.Write(append(line, "}\n"...))
			got.Events++
		}
	}
	var since int64
	if !o.Since.IsZero() {
		since = o.Since.UnixNano()
	}
	errDone := errors.New("done")
	err = cps.Scan(ctx, since, func(cp Stored) error {
		if cp.N > upTo.N {
			return errDone
		}
		line = append(line[:0], `{"checkpoint":`...)
		line = append(line, cp.Body...)
		line = append(line, `,"sig":`...)
		line = appendString(line, cp.Sig)
		_, err := bw.Write(append(line, "}\n"...))
		got.Checkpoints++
		return err
	})
	if err != nil && err != errDone {
		return got, err
	}
	return got, bw.Flush()
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}
