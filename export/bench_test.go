package export

import (
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

// BenchmarkExportEvent is what the exporter spends on one decision for
// one syslog sink, the log's read and the socket aside: the stored event
// decoded for its time and kind, and formatted.
func BenchmarkExportEvent(b *testing.B) {
	ev := veto.Event{V: veto.EventVersion, Run: "bench-sqlite-3", Seq: 1234, Kind: veto.EventAllowed, Time: time.Now(),
		CallID: "sqlite-c3-1233", Tool: "Read", Actor: veto.Actor{Kind: "agent", ID: "bench"},
		Target: veto.Target{Kind: "file", ID: "/tmp/veto-servebench-1/home/ws/src/main.go"}, PolicyRev: "p-e08222653854",
		Prev: "0a50b493c946a174b57fbfcb333502ea15eba37b17f780449cc2cc5780f915fd"}
	body, err := eventlog.EncodeEvent(ev)
	if err != nil {
		b.Fatal(err)
	}
	h := Header{Facility: 16, Hostname: "host-1", AppName: "veto", ProcID: "4242"}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		t, kind, ok := timeAndKind(body)
		if !ok {
			b.Fatal("does not decode")
		}
		r := Record{Run: ev.Run, Seq: ev.Seq, Kind: kind, Time: t, Body: body}
		buf = Format(buf[:0], &h, &r)
	}
}
