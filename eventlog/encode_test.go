package eventlog_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

// FuzzEventCodec holds the hand-written event encoder to encoding/json:
// whatever the strings, the stored form decodes to the same event.
func FuzzEventCodec(f *testing.F) {
	f.Add("run-1", "call\"1", "Bash\n", "rule.x", "file", "/a/\xffb", "agent\u2028", int64(1700000000), uint8(2), true)
	f.Add("", "", "", "", "", "", "", int64(0), uint8(0), false)
	f.Fuzz(func(t *testing.T, run, callID, tool, ruleID, kind, id, agent string, sec int64, risk uint8, complete bool) {
		e := veto.Event{V: veto.EventVersion, Run: run, Seq: 7, Kind: veto.EventDenied,
			Time:   time.Unix(sec%(1<<34), sec%1e9).UTC(),
			CallID: callID, Tool: tool, Actor: veto.Actor{Kind: kind, Agent: agent}, Stage: veto.StageRule,
			Rule: ruleID, Reason: "r", Risk: veto.Risk(risk % 5), Target: veto.Target{Kind: veto.TargetKind(kind), ID: id},
			PolicyRev: id, Patched: complete, WouldDeny: ruleID, WouldReason: agent, Complete: &complete, Awaiting: veto.AwaitApproval,
			Fact: &veto.FileFact{Path: id, Exists: complete, Dir: !complete, Size: sec, ModTime: time.Unix(sec%(1<<33), 0).UTC(), Hash: run,
				Stamp: veto.FileStamp{Dev: uint64(sec), Ino: uint64(risk), Change: -sec}},
			Files: []veto.FileFact{{Path: tool, Exists: true, Size: -sec}, {Path: callID}}, For: veto.Actor{ID: agent, Kind: kind}, Prev: ruleID}
		b, err := eventlog.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		var viaStd veto.Event
		if err := json.Unmarshal(b, &viaStd); err != nil {
			t.Fatalf("stored form is not JSON: %v\n%s", err, b)
		}
		std, _ := json.Marshal(e)
		var want veto.Event
		if err := json.Unmarshal(std, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(viaStd, want) {
			t.Fatalf("hand-written encoding decodes to\n%+v\nencoding/json's to\n%+v", viaStd, want)
		}
	})
}
