package eventlog_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

// full is an event with every field set, of the given kind.
func full(kind veto.EventKind) veto.Event {
	yes := true
	at := time.Date(2026, 3, 4, 5, 6, 7, 890000000, time.UTC)
	return veto.Event{V: veto.EventVersion, Run: "run\t1", Seq: 42, Kind: kind, Time: at,
		CallID: "call\r\"1\"", Tool: "mcp__x__y\\z", Actor: veto.Actor{Kind: "agent", ID: "sub\x01", Agent: "a\u2029b"},
		Stage: veto.StageRule, Rule: "files.protected", Reason: "protected_path", ToolDenial: veto.Unavailable,
		Risk: veto.RiskHigh, Target: veto.Target{Kind: veto.TargetFile, ID: "/w/\xffa"}, PolicyRev: "rev<&>",
		Patched: true, Outcome: veto.Succeeded, Complete: &yes, Awaiting: veto.AwaitInput, Host: "x.example:443",
		Fact: &veto.FileFact{Path: "/w/a", Exists: true, Dir: true, Size: 12, ModTime: at.Add(time.Second),
			Hash: "ab12", Stamp: veto.FileStamp{Dev: 7, Ino: 8, Change: 9}},
		Files: []veto.FileFact{{Path: "/w/b", Exists: true, Size: -1}, {Path: "/w/c"}, {Path: "/w/d", Hash: "cd"}},
		Prev:  "0011"}
}

// Every field of every kind survives the stored form, and the stored form
// says what encoding/json would say of the event.
func TestEncodeEventKeepsEveryField(t *testing.T) {
	for _, kind := range []veto.EventKind{veto.EventRunStarted, veto.EventAllowed, veto.EventDenied, veto.EventToolDenied,
		veto.EventObserved, veto.EventSuspended, veto.EventEgressAllowed, veto.EventProbe} {
		e := full(kind)
		b, err := eventlog.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		var ours, std any
		if err := json.Unmarshal(b, &ours); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", kind, err, b)
		}
		sb, _ := json.Marshal(e)
		if err := json.Unmarshal(sb, &std); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ours, std) {
			t.Fatalf("%s: stored form\n%s\nencoding/json\n%s", kind, b, sb)
		}
		var back veto.Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		want := e
		want.Target.ID = "/w/\ufffda" // invalid UTF-8 is stored as U+FFFD
		if !reflect.DeepEqual(back, want) {
			t.Fatalf("%s: decoded\n%+v\nwant\n%+v", kind, back, want)
		}
	}
	// A time in another zone, and an event of no kind, are written as
	// encoding/json writes them.
	for _, e := range []veto.Event{
		{V: 1, Seq: 1, Kind: veto.EventAllowed, CallID: "c", Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))},
		{V: 1, Seq: 1, Time: time.Unix(5, 0).UTC()},
	} {
		b, err := eventlog.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		var ours, std any
		sb, _ := json.Marshal(e)
		if json.Unmarshal(b, &ours) != nil || json.Unmarshal(sb, &std) != nil || !reflect.DeepEqual(ours, std) {
			t.Errorf("stored form\n%s\nencoding/json\n%s", b, sb)
		}
	}
	// An event with nothing optional set writes only its fixed fields.
	b, err := eventlog.EncodeEvent(veto.Event{V: 1, Run: "", Seq: 3, Kind: veto.EventAllowed, Time: time.Unix(0, 0).UTC(),
		Fact: &veto.FileFact{Path: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"v":1,"run":"","seq":3,"kind":"invocation_allowed","time":"1970-01-01T00:00:00Z","fact":{"path":"p","exists":false}}`; string(b) != want {
		t.Fatalf("stored form\n%s\nwant\n%s", b, want)
	}
	// Each risk level is written by name; one out of range is an error.
	for r, name := range map[veto.Risk]string{veto.RiskLow: "low", veto.RiskMedium: "medium", veto.RiskHigh: "high", veto.RiskCritical: "critical"} {
		b, err := eventlog.EncodeEvent(veto.Event{V: 1, Seq: 1, Kind: veto.EventDenied, CallID: "c", Risk: r})
		if err != nil || !bytes.Contains(b, []byte(`,"risk":"`+name+`"`)) {
			t.Errorf("risk %v: %s %v", r, b, err)
		}
	}
	if _, err := eventlog.EncodeEvent(veto.Event{V: 1, Seq: 1, Kind: veto.EventDenied, CallID: "c", Risk: veto.Risk(200)}); err == nil {
		t.Error("a risk out of range was encoded")
	}
}

// Strings are written byte for byte as encoding/json writes them without
// HTML escaping (except \b and \f, which it spells as letters since Go
// 1.22 and the encoder as \u escapes: both decode alike).
func TestEncodeEventStringsAsEncodingJSON(t *testing.T) {
	var cases []string
	for c := 0; c < 0x80; c++ {
		if c != '\b' && c != '\f' {
			cases = append(cases, "a"+string(rune(c))+"b")
		}
	}
	cases = append(cases, "", "plain", "\xff", "a\xffb\xfe", "\u2028", "x\u2029y", "é中🙂", "\"\\/", "<>&", "tail\x1f", "\uFFFD", "a\uFFFDb\xff")
	for _, s := range cases {
		b, err := eventlog.EncodeEvent(veto.Event{V: 1, Run: s, Seq: 1, Kind: veto.EventRunStarted})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := `"run":` + strings.TrimSuffix(buf.String(), "\n") + `,"seq"`
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("%q stored as\n%s\nwant %s", s, b, want)
		}
	}
}

// DecodeEvent refuses what it cannot vouch for, kind by kind, and takes
// each kind's well-formed event.
func TestDecodeEventRefusesWhatItCannotVouchFor(t *testing.T) {
	yes := true
	good := map[string]veto.Event{
		"run_started":  {Kind: veto.EventRunStarted, Complete: &yes},
		"allowed":      {Kind: veto.EventAllowed, CallID: "c"},
		"denied":       {Kind: veto.EventDenied, CallID: "c"},
		"tool_denied":  {Kind: veto.EventToolDenied, CallID: "c"},
		"suspended":    {Kind: veto.EventSuspended, CallID: "c"},
		"observation":  {Kind: veto.EventObserved, CallID: "c", Outcome: veto.Failed},
		"knowledge":    {Kind: veto.EventObserved, CallID: "c", Outcome: veto.Succeeded, Files: []veto.FileFact{{Path: "/a"}}},
		"egress":       {Kind: veto.EventEgressAllowed, Host: strings.Repeat("h", 260)},
		"probe":        {Kind: veto.EventProbe, CallID: "c", Fact: &veto.FileFact{Path: "/a"}},
		"pending-seen": {Kind: veto.EventObserved, CallID: "c", Outcome: veto.Pending},
	}
	bad := map[string]veto.Event{
		"no-seq":              {Kind: veto.EventAllowed, CallID: "c"},
		"start-no-bit":        {Kind: veto.EventRunStarted},
		"allowed-no-call":     {Kind: veto.EventAllowed},
		"denied-no-call":      {Kind: veto.EventDenied},
		"tool-denied-no-call": {Kind: veto.EventToolDenied},
		"suspended-no-call":   {Kind: veto.EventSuspended},
		"observation-no-call": {Kind: veto.EventObserved, Outcome: veto.Failed},
		"unknown-outcome":     {Kind: veto.EventObserved, CallID: "c", Outcome: "maybe"},
		"no-outcome":          {Kind: veto.EventObserved, CallID: "c"},
		"knowledge-failed":    {Kind: veto.EventObserved, CallID: "c", Outcome: veto.Failed, Files: []veto.FileFact{{Path: "/a"}}},
		"knowledge-cancelled": {Kind: veto.EventObserved, CallID: "c", Outcome: veto.Cancelled, Files: []veto.FileFact{{Path: "/a"}}},
		"knowledge-no-path":   {Kind: veto.EventObserved, CallID: "c", Outcome: veto.Succeeded, Files: []veto.FileFact{{Path: "/a"}, {}}},
		"egress-no-host":      {Kind: veto.EventEgressAllowed},
		"egress-long-host":    {Kind: veto.EventEgressAllowed, Host: strings.Repeat("h", 261)},
		"probe-no-call":       {Kind: veto.EventProbe, Fact: &veto.FileFact{Path: "/a"}},
		"probe-no-fact":       {Kind: veto.EventProbe, CallID: "c"},
		"probe-no-path":       {Kind: veto.EventProbe, CallID: "c", Fact: &veto.FileFact{}},
		"unknown-kind":        {Kind: "teleported", CallID: "c"},
	}
	encode := func(e veto.Event, seq uint64) []byte {
		e.V, e.Run, e.Seq = veto.EventVersion, "r", seq
		b, err := eventlog.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for name, e := range good {
		if got, err := eventlog.DecodeEvent(encode(e, 5)); err != nil || got.Kind != e.Kind || got.Seq != 5 {
			t.Errorf("%s: %+v %v", name, got, err)
		}
		other := e
		other.V = veto.EventVersion + 1
		b, _ := json.Marshal(other)
		if _, err := eventlog.DecodeEvent(b); err == nil {
			t.Errorf("%s of another shape version decoded", name)
		}
	}
	for name, e := range bad {
		seq := uint64(5)
		if name == "no-seq" {
			seq = 0
		}
		if _, err := eventlog.DecodeEvent(encode(e, seq)); err == nil {
			t.Errorf("%s decoded", name)
		}
		// A projection takes it as damage.
		p := eventlog.NewProjection("r")
		p.Apply(ev(1, veto.EventRunStarted, ""))
		e.V, e.Run, e.Seq = veto.EventVersion, "r", 2
		p.Apply(e)
		if name != "no-seq" && p.State().History.Complete() {
			t.Errorf("%s: applied without damage", name)
		}
		if name != "no-seq" && (p.State().History.Len() != 0 || len(p.Egress()) != 0 || len(p.KnownFiles()) != 0) {
			t.Errorf("%s: folded into the run (history %d, egress %v, files %v)", name, p.State().History.Len(), p.Egress(), p.KnownFiles())
		}
	}
	for _, b := range []string{"", "{", "[]", `{"v":"1"}`} {
		if _, err := eventlog.DecodeEvent([]byte(b)); err == nil || !strings.HasPrefix(err.Error(), "decode event: ") {
			t.Errorf("%q decoded, or refused as %v", b, err)
		}
	}
}

// The projection folds a run: outcomes and targets move with their call,
// knowledge and the allow-list come from their events, and only a run
// started once, at sequence 1, with its bit set, is complete.
func TestProjectionFoldsTheRun(t *testing.T) {
	file := func(p string) veto.Target { return veto.Target{Kind: veto.TargetFile, ID: p} }
	p := eventlog.NewProjection("r")
	if st := p.State(); st.History.Complete() || p.Next() != 1 {
		t.Fatalf("an empty projection: next %d, complete %v", p.Next(), st.History.Complete())
	}
	a := ev(2, veto.EventAllowed, "a")
	a.Target = file("/w/a")
	obs := func(seq uint64, call string, o veto.Outcome, tg veto.Target, files ...veto.FileFact) veto.Event {
		e := ev(seq, veto.EventObserved, call)
		e.Tool, e.Outcome, e.Target, e.Files = "", o, tg, files
		return e
	}
	allow := ev(7, veto.EventEgressAllowed, "")
	allow.Host = "x.example"
	allow2 := ev(8, veto.EventEgressAllowed, "")
	allow2.Host = "*.y.example"
	for _, e := range []veto.Event{
		ev(1, veto.EventRunStarted, ""),
		a,
		ev(3, veto.EventToolDenied, "b"),
		obs(4, "a", veto.Succeeded, veto.Target{}, veto.FileFact{Path: "/w/a", Exists: true, Hash: "1"}),
		ev(5, veto.EventDenied, "c"),
		obs(6, "c", veto.Failed, file("/w/c"), veto.FileFact{}),
		allow, allow2,
		obs(9, "d", veto.Cancelled, veto.Target{}),
		ev(10, veto.EventSuspended, "e"),
		obs(11, "a", veto.Succeeded, file("/w/a2"), veto.FileFact{Path: "/w/a", Exists: true, Hash: "2"}, veto.FileFact{Path: "/w/b", Hash: "3"}),
	} {
		if e.Kind == veto.EventObserved && len(e.Files) == 1 && e.Files[0].Path == "" {
			e.Files = nil
		}
		p.Apply(e)
	}
	st := p.State()
	if !st.History.Complete() || p.Next() != 12 || st.Next != 12 || st.Run != "r" {
		t.Fatalf("state %+v next %d", st, p.Next())
	}
	var got []string
	for _, o := range st.History.All() {
		got = append(got, o.CallID+"="+string(o.Outcome)+"@"+o.Target.ID+"#"+itoa(o.Seq))
	}
	want := []string{"a=succeeded@/w/a2#2", "b=denied@#3", "c=failed@/w/c#5", "d=cancelled@#9"}
	if !slices.Equal(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}
	if f, ok := p.KnownFile("/w/a"); !ok || f.Hash != "2" {
		t.Errorf("known /w/a: %+v %v", f, ok)
	}
	if _, ok := p.KnownFile("/w/c"); ok {
		t.Error("knowledge from nowhere")
	}
	if got := p.KnownFiles(); !slices.Equal(got, []string{"/w/a", "/w/b"}) {
		t.Errorf("known files %v", got)
	}
	if got := p.Egress(); !slices.Equal(got, []string{"x.example", "*.y.example"}) {
		t.Errorf("egress %v", got)
	}
	eg := p.Egress()
	eg[0] = "changed"
	if p.Egress()[0] != "x.example" {
		t.Error("Egress returned the projection's own list")
	}

	no := false
	for name, evs := range map[string][]veto.Event{
		"started-incomplete": {{V: 1, Run: "r", Seq: 1, Kind: veto.EventRunStarted, Complete: &no}},
		"started-twice":      {ev(1, veto.EventRunStarted, ""), func() veto.Event { e := ev(1, veto.EventRunStarted, ""); e.Seq = 2; return e }()},
		"started-late":       {ev(1, veto.EventAllowed, "x"), func() veto.Event { e := ev(1, veto.EventRunStarted, ""); e.Seq = 2; return e }()},
		"sequence-repeated":  {ev(1, veto.EventRunStarted, ""), ev(2, veto.EventAllowed, "x"), ev(2, veto.EventAllowed, "y")},
	} {
		q := eventlog.NewProjection("r")
		for _, e := range evs {
			q.Apply(e)
		}
		if q.State().History.Complete() {
			t.Errorf("%s: complete", name)
		}
		if name == "sequence-repeated" && q.Next() != 3 {
			t.Errorf("a repeated sequence number moved next to %d", q.Next())
		}
	}
	q := eventlog.NewProjection("r")
	q.Apply(ev(1, veto.EventRunStarted, ""))
	q.Apply(ev(5, veto.EventAllowed, "x"))
	if q.Next() != 6 {
		t.Errorf("after a gap, next %d, want 6", q.Next())
	}
	q.Skip()
	if q.Next() != 7 || q.State().History.Complete() {
		t.Errorf("after a skip, next %d complete %v", q.Next(), q.State().History.Complete())
	}
}

// ObservedOutcome is the history's outcome of each kind of event.
func TestObservedOutcomeOfEachKind(t *testing.T) {
	for kind, want := range map[veto.EventKind]veto.Outcome{
		veto.EventAllowed: veto.Pending, veto.EventDenied: veto.Denied, veto.EventToolDenied: veto.Denied,
		veto.EventObserved: veto.Cancelled,
	} {
		e := veto.Event{Kind: kind, Outcome: veto.Cancelled}
		if o, ok := eventlog.ObservedOutcome(e); !ok || o != want {
			t.Errorf("%s: %q %v, want %q", kind, o, ok, want)
		}
	}
	for _, kind := range []veto.EventKind{veto.EventRunStarted, veto.EventSuspended, veto.EventEgressAllowed, veto.EventProbe} {
		if o, ok := eventlog.ObservedOutcome(veto.Event{Kind: kind, Outcome: veto.Failed}); ok || o != "" {
			t.Errorf("%s observes %q", kind, o)
		}
	}
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
