//go:build !race

package server_test

import "time"

// pushDeadline is how soon every instance decides with a pushed revision:
// within 2 s, as docs/operators.md promises (an instance looks each
// second). Under the race detector, which slows veto several times over on
// a loaded machine, the figure is logged and held to a looser bound.
const pushDeadline = 2 * time.Second
