package mcpgate

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Pins keeps the definitions of the tools of each upstream server, by the
// server's name, in two tables of the state's database (veto_mcp_servers,
// veto_mcp_tools), made when missing, as the token table is: every
// gateway on one database, and `veto mcp approve`, see the same pins.
//
// A tool's row holds the hash of the definition a person (or the server's
// first listing) pinned, the hash of the definition last seen and that
// definition's text, so that a person can read what they approve. The
// text is the server's own description of the tool, never a call's
// arguments or output.
type Pins struct {
	db func() *sql.DB            // the database now (an SQLite state is reopened when it moves)
	q  func(query string) string // the dialect's markers
}

// MaxDefinition bounds a tool's definition (its canonical JSON): what a
// person must be able to read whole before approving it. A longer one is
// never pinned, not even by the server's first listing, nor kept; the
// gateway refuses its calls (tool_definition_too_large) and no person can
// approve it. Nothing is ever cut: a cut text would be approved whole.
const MaxDefinition = 64 << 10

// OpenPins makes the pin tables when they are missing. q writes a
// query's ? markers in the database's form (state.Markers).
func OpenPins(ctx context.Context, db func() *sql.DB, q func(query string) string) (*Pins, error) {
	p := &Pins{db: db, q: q}
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS veto_mcp_servers (
			server TEXT PRIMARY KEY,
			first_listed BIGINT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS veto_mcp_tools (
			server TEXT NOT NULL,
			tool TEXT NOT NULL,
			pinned TEXT NOT NULL,
			seen TEXT NOT NULL,
			definition TEXT NOT NULL,
			changed BIGINT NOT NULL,
			PRIMARY KEY (server, tool))`,
	} {
		if _, err := db().ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("mcpgate: the pin tables: %w", err)
		}
	}
	return p, nil
}

// Definition is what of a tool is pinned: what the agent reads of it and
// what veto describes it by.
type Definition struct {
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	InputSchema any                  `json:"inputSchema"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

// DefinitionOf returns the pinned part of a tool and its text: JSON with
// every object's keys sorted, so that the same definition always reads,
// and hashes, alike.
func DefinitionOf(t *mcp.Tool) (Definition, []byte, error) {
	d := Definition{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, Annotations: t.Annotations}
	// Through a generic value, so that a schema given as a struct and the
	// same schema as a map encode alike (maps encode with sorted keys).
	b, err := json.Marshal(d)
	if err != nil {
		return d, nil, err
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return d, nil, err
	}
	b, err = json.Marshal(v)
	return d, b, err
}

// Hash is a definition's pin: SHA-256 of its text.
func Hash(text []byte) string {
	h := sha256.Sum256(text)
	return "sha256:" + hex.EncodeToString(h[:])
}

// Seen is one tool of a listing: its name, its definition's hash and text.
type Seen struct {
	Tool, Hash string
	Text       []byte
}

// Record notes a listing of server's tools. The server's first listing
// pins every tool in it; a tool of a later listing that has no pin is
// recorded unpinned (tool_new) and one whose definition differs from its
// pin keeps its pin, with what was seen beside it. A definition over
// MaxDefinition is recorded by its hash alone, never pinned.
func (p *Pins) Record(ctx context.Context, server string, tools []Seen, now time.Time) (first bool, err error) {
	tx, err := p.db().BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, p.q(`INSERT INTO veto_mcp_servers (server, first_listed) VALUES (?, ?) ON CONFLICT (server) DO NOTHING`),
		server, now.UnixNano())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	first = n == 1
	for _, t := range tools {
		pinned, text := "", t.Text
		if len(text) > MaxDefinition {
			text = nil
		} else if first {
			pinned = t.Hash
		}
		_, err := tx.ExecContext(ctx, p.q(`INSERT INTO veto_mcp_tools (server, tool, pinned, seen, definition, changed) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (server, tool) DO UPDATE SET seen = excluded.seen, definition = excluded.definition, changed = excluded.changed
			WHERE veto_mcp_tools.seen <> excluded.seen`),
			server, t.Tool, pinned, t.Hash, string(text), now.UnixNano())
		if err != nil {
			return false, err
		}
	}
	return first, tx.Commit()
}

// Pinned returns the hash pinned for a tool of server; "" when it has
// none.
func (p *Pins) Pinned(ctx context.Context, server, tool string) (string, error) {
	var pinned string
	err := p.db().QueryRowContext(ctx, p.q(`SELECT pinned FROM veto_mcp_tools WHERE server = ? AND tool = ?`), server, tool).Scan(&pinned)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return pinned, err
}

// PinnedAll returns the pinned hash of every tool of server veto has
// seen, by tool ("" : unpinned).
func (p *Pins) PinnedAll(ctx context.Context, server string) (map[string]string, error) {
	rows, err := p.db().QueryContext(ctx, p.q(`SELECT tool, pinned FROM veto_mcp_tools WHERE server = ?`), server)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var tool, pinned string
		if err := rows.Scan(&tool, &pinned); err != nil {
			return nil, err
		}
		out[tool] = pinned
	}
	return out, rows.Err()
}

// Pin is one tool's row, as `veto mcp pins` shows it.
type Pin struct {
	Tool       string
	Pinned     string // "" : never pinned (tool_new)
	Seen       string
	Definition string // the definition last seen
	Changed    time.Time
}

// Awaiting reports whether the tool is refused until a person approves it.
func (p Pin) Awaiting() bool { return p.Pinned != p.Seen }

// Whole reports whether Definition is the whole definition of hash Seen,
// the only text a person may approve: one over MaxDefinition is not kept.
func (p Pin) Whole() bool { return whole(p.Definition, p.Seen) }

// whole reports whether def, kept for the definition of hash seen, is all
// of it: Record keeps a definition whole or not at all (""), and an older
// veto kept the first MaxDefinition bytes of a longer one, which then do
// not hash to seen.
func whole(def, seen string) bool {
	return def != "" && (len(def) < MaxDefinition || Hash([]byte(def)) == seen)
}

// List returns every tool of server veto has seen, by name.
func (p *Pins) List(ctx context.Context, server string) ([]Pin, error) {
	rows, err := p.db().QueryContext(ctx, p.q(`SELECT tool, pinned, seen, definition, changed FROM veto_mcp_tools WHERE server = ? ORDER BY tool`), server)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Pin
	for rows.Next() {
		var pin Pin
		var changed int64
		if err := rows.Scan(&pin.Tool, &pin.Pinned, &pin.Seen, &pin.Definition, &changed); err != nil {
			return nil, err
		}
		pin.Changed = time.Unix(0, changed)
		out = append(out, pin)
	}
	return out, rows.Err()
}

// ServerPin is a tool awaiting approval, with its server.
type ServerPin struct {
	Server string
	Pin
}

// Awaiting returns every tool of every server that is refused until a
// person approves it, by server and tool.
func (p *Pins) Awaiting(ctx context.Context) ([]ServerPin, error) {
	rows, err := p.db().QueryContext(ctx, `SELECT server, tool, pinned, seen, definition, changed FROM veto_mcp_tools WHERE pinned <> seen ORDER BY server, tool`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ServerPin
	for rows.Next() {
		var sp ServerPin
		var changed int64
		if err := rows.Scan(&sp.Server, &sp.Tool, &sp.Pinned, &sp.Seen, &sp.Definition, &changed); err != nil {
			return nil, err
		}
		sp.Changed = time.Unix(0, changed)
		out = append(out, sp)
	}
	return out, rows.Err()
}

// ApproveSeen pins one tool's definition if it is still the one of hash
// seen, the one the person was shown, and its text is kept whole; ok is
// false when it is not (it changed again, was approved already, or is
// over MaxDefinition and so could not be shown whole).
func (p *Pins) ApproveSeen(ctx context.Context, server, tool, seen string, now time.Time) (ok bool, err error) {
	var def string
	err = p.db().QueryRowContext(ctx, p.q(`SELECT definition FROM veto_mcp_tools WHERE server = ? AND tool = ? AND seen = ?`),
		server, tool, seen).Scan(&def)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !whole(def, seen) {
		return false, nil
	}
	// The text for one hash is one text: a row seen again since holds
	// the same, or another hash, which the update's condition refuses.
	res, err := p.db().ExecContext(ctx, p.q(`UPDATE veto_mcp_tools SET pinned = seen, changed = ? WHERE server = ? AND tool = ? AND seen = ? AND pinned <> seen`),
		now.UnixNano(), server, tool, seen)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return err == nil && n == 1, err
}
