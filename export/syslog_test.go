package export

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// message is an RFC 5424 message as parseMessage reads it.
type message struct {
	pri, version                                  int
	timestamp, host, app, procid, msgid, sd, text string
}

// parseMessage reads one RFC 5424 message strictly (section 6's ABNF, as
// veto writes it: NILVALUE structured data, MSG-ANY in US-ASCII), the
// oracle of the formatter's tests.
func parseMessage(b []byte) (message, error) {
	var m message
	s := string(b)
	if !strings.HasPrefix(s, "<") {
		return m, fmt.Errorf("no PRI")
	}
	end := strings.IndexByte(s, '>')
	if end < 2 || end > 4 {
		return m, fmt.Errorf("PRI of %d digits", end-1)
	}
	pri := s[1:end]
	if len(pri) > 1 && pri[0] == '0' {
		return m, fmt.Errorf("PRI %q has a leading zero", pri)
	}
	var err error
	if m.pri, err = strconv.Atoi(pri); err != nil || m.pri > 191 || strings.Trim(pri, "0123456789") != "" {
		return m, fmt.Errorf("PRI %q", pri)
	}
	s = s[end+1:]
	fields := strings.SplitN(s, " ", 8)
	if len(fields) != 8 {
		return m, fmt.Errorf("%d header fields", len(fields))
	}
	if fields[0] != "1" {
		return m, fmt.Errorf("version %q", fields[0])
	}
	m.version = 1
	lim := []int{0, 0, maxHostname, maxAppName, maxProcID, maxMsgID}
	for i := 1; i <= 5; i++ {
		f := fields[i]
		if f == "" {
			return m, fmt.Errorf("field %d empty", i)
		}
		if i >= 2 && len(f) > lim[i] {
			return m, fmt.Errorf("field %d is %d long, over %d", i, len(f), lim[i])
		}
		for j := 0; j < len(f); j++ {
			if f[j] < 33 || f[j] > 126 {
				return m, fmt.Errorf("field %d holds byte %#x", i, f[j])
			}
		}
	}
	m.timestamp, m.host, m.app, m.procid, m.msgid, m.sd, m.text = fields[1], fields[2], fields[3], fields[4], fields[5], fields[6], fields[7]
	if m.timestamp != "-" {
		t, err := time.Parse(time.RFC3339Nano, m.timestamp)
		if err != nil || !strings.HasSuffix(m.timestamp, "Z") || t.Year() > 9999 {
			return m, fmt.Errorf("timestamp %q", m.timestamp)
		}
		if dot := strings.IndexByte(m.timestamp, '.'); dot >= 0 && len(m.timestamp)-dot-2 > 6 {
			return m, fmt.Errorf("timestamp %q: more than 6 fractional digits", m.timestamp)
		}
	}
	if m.sd != "-" {
		return m, fmt.Errorf("structured data %q", m.sd)
	}
	for i := 0; i < len(m.text); i++ {
		if c := m.text[i]; c < 32 || c > 126 {
			return m, fmt.Errorf("MSG holds byte %#x", c)
		}
	}
	return m, nil
}

func goldenRecords() []struct {
	name string
	h    Header
	r    Record
} {
	at := time.Date(2026, 12, 3, 14, 5, 6, 123456789, time.UTC)
	allow := []byte(`{"v":1,"run":"r1","seq":2,"kind":"invocation_allowed","time":"2026-12-03T14:05:06.123456789Z","tool":"Read"}`)
	h := Header{Facility: 16, Hostname: "host-1.example", AppName: "veto", ProcID: "4242"}
	return []struct {
		name string
		h    Header
		r    Record
	}{
		{"allow", h, Record{Run: "r1", Seq: 2, Kind: veto.EventAllowed, Time: at, Body: allow}},
		{"deny", h, Record{Run: "r1", Seq: 3, Kind: veto.EventDenied, Time: at.In(time.FixedZone("X", 3600)),
			Body: []byte(`{"v":1,"run":"r1","seq":3,"kind":"invocation_denied","rule":"file.credential","reason":"credential_path"}`)}},
		{"unicode and spaces in the JSON", h, Record{Kind: veto.EventAllowed, Time: at,
			Body: []byte("{ \"run\" : \"é-ü-😀-\\u00e9\",\n \"seq\": 1 }")}},
		{"a header of spaces, control and non-ASCII bytes", Header{Facility: 1, Hostname: "my host\névé", AppName: "v e", ProcID: ""},
			Record{Kind: "kind with spaces", Time: at, Body: allow}},
		{"over long fields", Header{Facility: 99, Hostname: strings.Repeat("h", 300), AppName: strings.Repeat("a", 60), ProcID: strings.Repeat("p", 200)},
			Record{Kind: veto.EventKind(strings.Repeat("k", 40)), Time: at, Body: allow}},
		{"not JSON", h, Record{Kind: veto.EventObserved, Body: []byte("half {\"a\": \x00\xff é")}},
	}
}

// TestFormatGolden holds the RFC 5424 formatter to testdata/format.golden
// (go test -run TestFormatGolden -update rewrites it) and every message to
// the strict parser.
func TestFormatGolden(t *testing.T) {
	var got bytes.Buffer
	for _, c := range goldenRecords() {
		b := Format(nil, &c.h, &c.r)
		if _, err := parseMessage(b); err != nil {
			t.Errorf("%s: %v\n%s", c.name, err, b)
		}
		fmt.Fprintf(&got, "# %s\n%s\n", c.name, b)
	}
	path := filepath.Join("testdata", "format.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("Format changed; got:\n%s\nwant:\n%s", got.Bytes(), want)
	}
}

// FuzzFormat: whatever the stored bytes, header fields and kind, Format
// writes one valid RFC 5424 message, and its MSG is the stored JSON (the
// same value), or the bytes as a JSON string when they are not JSON.
func FuzzFormat(f *testing.F) {
	for _, c := range goldenRecords() {
		f.Add(c.r.Body, c.h.Hostname, c.h.ProcID, string(c.r.Kind), c.h.Facility, c.r.Time.UnixNano())
	}
	f.Add([]byte(`"\ud800"`), "", "-", "", -1, int64(0))
	f.Add([]byte("[1, 2.5e3, true, null, {\"\xf0\x9f\x98\x80\": \"\x80\"}]"), "-", "1", "x", 23, int64(-1))
	f.Fuzz(func(t *testing.T, body []byte, host, procid, kind string, facility int, at int64) {
		r := Record{Kind: veto.EventKind(kind), Body: body}
		if at != 0 {
			r.Time = time.Unix(0, at)
		}
		b := Format(nil, &Header{Facility: facility, Hostname: host, AppName: "veto", ProcID: procid}, &r)
		m, err := parseMessage(b)
		if err != nil {
			t.Fatalf("%v\n%q", err, b)
		}
		var got, want any
		if err := decodeNumbers([]byte(m.text), &got); err != nil {
			t.Fatalf("MSG is not JSON: %v\n%q", err, m.text)
		}
		if json.Valid(body) {
			decodeNumbers(body, &want)
		} else {
			// Each byte that is not UTF-8 reads U+FFFD, as range (and
			// json.Unmarshal) reads it.
			want = string([]rune(string(body)))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("MSG reads %#v, the stored bytes %#v", got, want)
		}
	})
}

// decodeNumbers decodes JSON keeping numbers as written (1E700 is JSON,
// and no float64).
func decodeNumbers(b []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

func TestParseSyslog(t *testing.T) {
	for _, c := range []struct {
		in            string
		network, addr string
		fac           int
		ok            bool
	}{
		{"tcp://127.0.0.1:514", "tcp", "127.0.0.1:514", 16, true},
		{"udp://[::1]:514?facility=local3", "udp", "[::1]:514", 19, true},
		{"tcp://127.0.0.1", "", "", 0, false},
		{"http://127.0.0.1:514", "", "", 0, false},
		{"tcp://127.0.0.1:514/x", "", "", 0, false},
		{"tcp://127.0.0.1:514?facility=nope", "", "", 0, false},
		{"tcp://127.0.0.1:514?level=1", "", "", 0, false},
		{"127.0.0.1:514", "", "", 0, false},
	} {
		n, a, f, err := ParseSyslog(c.in)
		if (err == nil) != c.ok || n != c.network || a != c.addr || f != c.fac {
			t.Errorf("ParseSyslog(%q) = %q %q %d %v", c.in, n, a, f, err)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "4096": 4096, "64MB": 64e6, "512KiB": 512 << 10, "1 GiB": 1 << 30, "10B": 10} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "MB", "1.5MB", "9999999999GiB", "12XB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) is no error", in)
		}
	}
}
