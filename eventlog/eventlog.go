// Package eventlog is the stored form of veto's events and what stores
// build from it: encoding and decoding an event, the hash chain that links
// a run's events, and the projection that folds a run's events into its
// state and tally. The stores (memstore, sqlstore) share it; the gate
// itself needs none of it.
package eventlog

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vetohq/veto"
)

// DecodeEvent parses a stored event. It refuses anything it cannot vouch
// for: malformed JSON, another shape version, an unknown kind or outcome.
func DecodeEvent(b []byte) (veto.Event, error) {
	var e veto.Event
	if err := json.Unmarshal(b, &e); err != nil {
		return veto.Event{}, fmt.Errorf("decode event: %w", err)
	}
	if e.V != veto.EventVersion {
		return e, fmt.Errorf("event shape version %d, want %d", e.V, veto.EventVersion)
	}
	if err := validate(e); err != nil {
		return e, err
	}
	return e, nil
}

// validate checks what an event of its kind must carry.
func validate(e veto.Event) error {
	if e.Seq == 0 {
		return errors.New("event without a sequence number")
	}
	switch e.Kind {
	case veto.EventRunStarted:
		if e.Complete == nil {
			return errors.New("run_started without its complete bit")
		}
	case veto.EventAllowed, veto.EventDenied, veto.EventToolDenied, veto.EventSuspended:
		if e.CallID == "" {
			return fmt.Errorf("%s without a call id", e.Kind)
		}
	case veto.EventObserved:
		if e.CallID == "" || !e.Outcome.Valid() {
			return errors.New("observation without a call id or with an unknown outcome")
		}
		if len(e.Files) > 0 && e.Outcome != veto.Succeeded {
			return errors.New("knowledge from a call that did not succeed")
		}
		for _, f := range e.Files {
			if f.Path == "" {
				return errors.New("knowledge without a path")
			}
		}
	case veto.EventEgressAllowed:
		if e.Host == "" || len(e.Host) > 260 {
			return errors.New("egress_allowed without a host")
		}
	case veto.EventApproved, veto.EventApprovalRefused:
		if e.CallID == "" || e.Tool == "" || len(e.ArgsHash) != 64 {
			return fmt.Errorf("%s without the call id, tool and argument hash it answers", e.Kind)
		}
	case veto.EventObservationRefused:
		if e.CallID == "" || e.Reason == "" {
			return errors.New("observation_refused without a call id or a reason")
		}
	case veto.EventProbe:
		if e.CallID == "" || e.Fact == nil || e.Fact.Path == "" {
			return errors.New("probe without a call id or a fact")
		}
	default:
		return fmt.Errorf("unknown event kind %q", e.Kind)
	}
	return nil
}
