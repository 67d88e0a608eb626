package eventlog

import (
	"testing"
	"time"
)

// FuzzAppendTime holds the event encoder's time appender to
// time.RFC3339Nano, byte for byte, in and out of its short path.
func FuzzAppendTime(f *testing.F) {
	for _, s := range [][2]int64{{0, 0}, {1796103834, 200955342}, {1796103834, 100}, {1796103834, 120000000},
		{253402300799, 999999999}, {253402300800, 0}, {-62135596800, 0}, {-62135596801, 1}, {1, 1}} {
		f.Add(s[0], s[1], false)
	}
	f.Fuzz(func(t *testing.T, sec, nsec int64, zoned bool) {
		tm := time.Unix(sec, nsec%1e9).UTC()
		if zoned {
			tm = tm.In(time.FixedZone("X", 3600))
		}
		got, want := string(appendTime(nil, tm)), tm.Format(time.RFC3339Nano)
		if got != want {
			t.Fatalf("appendTime(%v) = %q, want %q", tm, got, want)
		}
	})
}
