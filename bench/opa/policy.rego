# veto's path-only file rules, in Rego.
#
# input:
#   tool       the tool's name ("Read", "Write", "Edit", "Grep", …)
#   workspace  the call's workspace, a real absolute path; absent when the
#              call has no working directory
#   paths      the call's path arguments, already resolved:
#              [{"param": "file_path", "real": [...], "forms": [...]}]
#              real:  the real forms (kernel reading and cleaned reading),
#                     judged for containment in the write roots
#              forms: every distinct form (real ones and the lexical one),
#                     judged against the pattern lists
#
# data.veto.files (built in Go from veto's defaults, see policy.go):
#   tools               tool → {"params": {param: "write"|"read"|"moved"},
#                       "searches_tree": bool}
#   roots               the write roots besides the workspace (temporary
#                       directories, extra roots), real absolute paths
#   protected, persistence, credentials
#                       {"include": index, "exclude": index}: veto's
#                       patterns with "~" expanded and relative patterns
#                       made to match at any depth; an index is
#                       {"exact": {path: true}, "under": ["dir/"],
#                       "base": {name: true}, "globs": [glob over "/"]}
#                       (with Config.GlobsOnly every pattern is a glob)
#   credential_anchors  the fixed directories of the absolute credential
#                       patterns, for the tree-search check
#
# decision is {"allow", "rule", "reason"}: the first rule that denies, in
# veto's order (write roots, protected, persistence, credential), with
# veto's rule id and reason code.
package veto.policy.files

tools := data.veto.files.tools

written := [p | some p in input.paths; tools[input.tool].params[p.param] in {"write", "moved"}]

read := [p | some p in input.paths; tools[input.tool].params[p.param] in {"read", "moved"}]

roots := array.concat([input.workspace], data.veto.files.roots) if {
	input.workspace
} else := data.veto.files.roots

deny(rule, reason) := {"allow": false, "rule": rule, "reason": reason}

decision := deny("file.write_roots", "workspace_unknown") if {
	not input.workspace
	some w in written
	not within_roots(w)
} else := deny("file.write_roots", "outside_write_roots") if {
	some w in written
	not within_roots(w)
} else := deny("file.protected", "protected_path") if {
	some w in written
	matches(data.veto.files.protected, w)
} else := deny("file.persistence", "persistence_target") if {
	some w in written
	matches(data.veto.files.persistence, w)
} else := deny("file.credential", "credential_path") if {
	some p in array.concat(written, read)
	matches(data.veto.files.credentials, p)
} else := deny("file.credential", "credential_search") if {
	tools[input.tool].searches_tree
	some p in read
	some anchor in data.veto.files.credential_anchors
	some f in p.forms
	f != anchor
	within(anchor, f)
} else := {"allow": true, "rule": "", "reason": ""}

# within_roots holds when every real form of w is at or below a root.
within_roots(w) if {
	every f in w.real {
		some r in roots
		within(f, r)
	}
}

# within holds when the absolute path p is root or below it.
within(p, root) if root == "/"

within(p, root) if p == root

within(p, root) if startswith(p, concat("", [root, "/"]))

# matches holds when a form of p is matched by list.include and not by
# list.exclude, as veto's pattern lists match.
matches(list, p) if {
	some f in p.forms
	hit(list.include, f)
	not hit(list.exclude, f)
}

# hit holds when one of the patterns of ix matches the absolute path f.
# ix holds them indexed by shape: exact paths, directories whose whole
# tree matches (as "dir/" prefixes; the directory itself is in exact),
# file names that match at any depth, and the rest as globs.
hit(ix, f) if ix.exact[f]

hit(ix, f) if strings.any_prefix_match(f, ix.under)

hit(ix, f) if {
	parts := split(f, "/")
	ix.base[parts[count(parts) - 1]]
}

hit(ix, f) if {
	some g in ix.globs
	glob.match(g, ["/"], f)
}
