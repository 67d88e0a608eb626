package sqlstore_test

import (
	"strconv"
	"testing"

	"github.com/vetohq/veto/sqlstore"
)

// Rebind numbers each "?" marker in turn and leaves the rest of the
// query as it is; Markers numbers them for PostgreSQL only.
func TestRebindNumbersEachMarker(t *testing.T) {
	dollar := func(i int) string { return "$" + strconv.Itoa(i) }
	for q, want := range map[string]string{
		"SELECT 1":                         "SELECT 1",
		"?":                                "$1",
		"a = ? AND b IN (?, ?)":            "a = $1 AND b IN ($2, $3)",
		"x = ?? ":                          "x = $1$2 ",
		"INSERT INTO t VALUES (?, 'q', ?)": "INSERT INTO t VALUES ($1, 'q', $2)",
		"":                                 "",
	} {
		if got := sqlstore.Rebind(q, dollar); got != want {
			t.Errorf("Rebind(%q) = %q, want %q", q, got, want)
		}
		if got := sqlstore.Markers("postgres")(q); got != want {
			t.Errorf("Markers(postgres)(%q) = %q, want %q", q, got, want)
		}
		if got := sqlstore.Markers("sqlite")(q); got != q {
			t.Errorf("Markers(sqlite)(%q) = %q, want it unchanged", q, got)
		}
	}
	if got := sqlstore.Rebind("a = ?", nil); got != "a = ?" {
		t.Errorf("Rebind with no placeholder = %q", got)
	}
}
