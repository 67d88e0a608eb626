package shell

import (
	"slices"
	"strings"
)

// Key names one analysis: a command's text in an environment. Rules of
// different families that analyse the same command in the same
// environment within one decision keep the report under it (the gate's
// per-decision memo, veto.Input.Memo), so the command is parsed once.
type Key struct {
	src, cwd, vars string
	depth          int
}

// KeyOf is the key of src analysed in env; varsID is VarsID(env.Vars),
// computed once when the rule is built.
func KeyOf(src string, env Env, varsID string) Key {
	d := env.MaxDepth
	if d == 0 {
		d = DefaultMaxDepth
	}
	return Key{src: src, cwd: env.Cwd, vars: varsID, depth: d}
}

// VarsID is a fingerprint of the variables an analysis may expand: equal
// for equal maps, whatever their order.
func VarsID(vars map[string]string) string {
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(vars[k])
		b.WriteByte(0)
	}
	return b.String()
}
