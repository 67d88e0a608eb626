package evidence_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/evidence"
)

// memExport is an export made by hand, without a database (a fuzzing
// process starts fast): two runs, two checkpoints, one event uncovered.
func memExport(t testing.TB, key ed25519.PrivateKey) []byte {
	var out bytes.Buffer
	out.WriteString(`{"veto_export":1}` + "\n")
	heads := map[string][]evidence.Head{}
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	for _, run := range []string{"f1", "f2"} {
		fmt.Fprintf(&out, `{"run":%q,"first":1,"prev":""}`+"\n", run)
		prev := ""
		for seq := uint64(1); seq <= 4; seq++ {
			e := veto.Event{V: 1, Run: run, Seq: seq, Kind: veto.EventAllowed, Time: at, CallID: fmt.Sprint("c", seq), Tool: "Read", Prev: prev}
			if seq == 1 {
				complete := true
				e = veto.Event{V: 1, Run: run, Seq: 1, Kind: veto.EventRunStarted, Time: at, Complete: &complete}
			}
			b, err := eventlog.EncodeEvent(e)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&out, `{"run":%q,"seq":%d,"event":%s}`+"\n", run, seq, b)
			prev = eventlog.ChainHash(b)
			if seq == 2 || (seq == 3 && run == "f1") {
				heads[fmt.Sprint(seq)] = append(heads[fmt.Sprint(seq)], evidence.Head{Run: run, Seq: seq, Hash: prev})
			}
		}
	}
	last := ""
	for n, k := range []string{"2", "3"} {
		cp := evidence.Checkpoint{V: 1, N: uint64(n + 1), Prev: last, Time: at, Key: evidence.KeyID(pubOf(key)), Events: 1, Heads: heads[k]}
		body, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, `{"checkpoint":%s,"sig":%q}`+"\n", body, evidence.Sign(key, body))
		last = evidence.Hash(body)
	}
	return out.Bytes()
}

// FuzzParseExport feeds Parse and Verify untrusted exports: neither
// panics, both give the same answer twice, and an export that verifies
// has every checkpoint's signature good and every run's chain whole, as
// checked here apart from Verify.
func FuzzParseExport(f *testing.F) {
	key := newKey(f)
	good := memExport(f, key)
	f.Add(good)
	f.Add(bytes.Replace(good, []byte(`"seq":2,`), []byte(`"seq":3,`), 1))
	f.Add([]byte(`{"veto_export":1}` + "\n" + `{"run":"x","first":1,"prev":""}` + "\n" + `{"run":"x","seq":1,"event_b64":"AAAA"}` + "\n"))
	f.Add([]byte(`{"veto_export":1}` + "\n" + `{"checkpoint":{"v":1,"n":1,"prev":"","time":"2026-01-01T00:00:00Z","key":"k","events":1,"heads":[{"run":"x","seq":18446744073709551615,"hash":""}]},"sig":""}` + "\n"))
	f.Add([]byte("{}"))
	pub := pubOf(key)
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := evidence.Parse(bytes.NewReader(in))
		p2, err2 := evidence.Parse(bytes.NewReader(in))
		if (err == nil) != (err2 == nil) {
			t.Fatalf("parsed once, refused once: %v, %v", err, err2)
		}
		if err != nil {
			return
		}
		r, r2 := evidence.Verify(p, pub), evidence.Verify(p2, pub)
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("two answers: %+v, %+v", r, r2)
		}
		if bytes.Equal(in, good) && !r.OK() {
			t.Fatalf("the good export fails: %v", r.Failures)
		}
		if !r.OK() {
			return
		}
		for _, c := range p.Checkpoints {
			if !evidence.VerifySig(pub, c.Body, c.Sig) {
				t.Fatalf("verified, with checkpoint %d's signature bad", c.CP.N)
			}
		}
		for _, rc := range p.Runs {
			if b := eventlog.VerifyChain(rc.Stored, rc.First, rc.Prev); b != nil {
				t.Fatalf("verified, with run %q broken: %v", rc.Run, b)
			}
		}
	})
}
