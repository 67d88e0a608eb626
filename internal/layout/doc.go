// Package layout holds veto's package edges to what DESIGN.md and
// STYLE.md say, with go list: which packages may open the stores, which
// may link the client adapters, and what the root's tests may link. It
// has no code of its own, only its tests.
package layout
