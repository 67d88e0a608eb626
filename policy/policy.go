// Package policy reads veto's policy files (veto.yaml), merges them in
// their order of precedence and builds the gate they describe. Decoding
// is strict: an unknown key, a wrong type, a duplicate rule id is a
// problem that names the file, the line and the column.
//
// Files, in order: the built-in default, the user's
// ($XDG_CONFIG_HOME/veto/veto.yaml), the project's (.veto/veto.yaml in the
// workspace), the one given with --policy, and the managed one
// (/etc/veto/veto.yaml). The user's file configures the built-in rules;
// every later file can only narrow: add rules, patterns and denials,
// shorten allow-lists, never turn a rule off or widen what is allowed.
//
// This package does not compile CEL: user rules are handed to a Compiler
// (package policy/celrule), so a program that links policy without it pays
// nothing for CEL.
package policy

// File is one policy file, as written. The rule families' sections
// (files, shell, egress, sequence, ...) are declared by the families
// themselves (package rule) and decoded into Sections, by key.
type File struct {
	Version int                 `yaml:"version" doc:"The shape of this file. Only 1 exists; omitted means 1."`
	Builtin *Builtin            `yaml:"builtin" doc:"Which built-in rules are on."`
	Tools   map[string]ToolSpec `yaml:"tools" doc:"Descriptors for tools veto does not know, by tool name (mcp__server__tool): which parameters are paths, URLs, commands or content, and what the tool can do."`
	Offer   *OfferSpec          `yaml:"offer" doc:"Which tools take part in a run at all."`
	Rules   []RuleSpec          `yaml:"rules" doc:"Your own rules, in CEL."`
	Approve bool                `yaml:"approve" doc:"When true, an allowed call is approved for the user: hooks answer allow and the client skips its own permission prompt. Only the user's file may set it."`
	Mode    string              `yaml:"mode" doc:"monitor: every rule decides as usual, but a refusal lets the call run and is recorded as would_deny (veto.control, which guards veto itself, is always enforced); enforce (the default). Only the user's file or a pushed revision may set monitor."`
	Monitor []string            `yaml:"monitor" doc:"Rule families (command, network, files, sequence, upload) or rule ids to run in monitor mode: their refusals are recorded as would_deny and the call runs. Only the user's file or a pushed revision may name them."`

	// Sections holds each rule family's section the file writes, by key:
	// a pointer to the section's type.
	Sections map[string]any `yaml:"-"`
}

// Builtin turns built-in rules off.
type Builtin struct {
	Off []string `yaml:"off" doc:"Ids of built-in rules to turn off. Only the user's file may turn a rule off."`
}

// ToolSpec describes a tool.
type ToolSpec struct {
	Params       map[string]string `yaml:"params" doc:"Parameter name to role: path (written), source_path (read), moved_path, url, command, content, input."`
	Capabilities []string          `yaml:"capabilities" doc:"What the tool can do: reads, writes, executes, network, content_from_source, overwrites, edits, searches_tree."`
	TrustZones   []string          `yaml:"trust_zones" doc:"The provider zones the tool may be used from; empty means any."`
}

// OfferSpec is offerability.
type OfferSpec struct {
	RequireRegistered bool                `yaml:"require_registered" doc:"Refuse tools that have no descriptor."`
	Unavailable       []string            `yaml:"unavailable" doc:"Tools switched off for every run."`
	Actors            map[string][]string `yaml:"actors" doc:"Actor (kind:id, kind:* or *) to the tool-name globs it may use."`
}

// RuleSpec is a user rule in CEL.
type RuleSpec struct {
	ID      string     `yaml:"id" doc:"The rule's id: [a-z][a-z0-9_.-]*, at most 64 characters, unique."`
	Match   *MatchSpec `yaml:"match" doc:"Which calls the rule looks at; omitted means every call."`
	Deny    string     `yaml:"deny" doc:"A CEL expression; when it is true the call is denied."`
	Ask     string     `yaml:"ask" doc:"Instead of deny: a CEL expression; when it is true the call waits for a person's approval (veto ui, veto serve), and one approved call of the same arguments may then pass it."`
	Reason  string     `yaml:"reason" doc:"The reason code of a denial, in the id format."`
	Message string     `yaml:"message" doc:"One sentence for a person; it must not quote arguments."`
	Needs   []string   `yaml:"needs" doc:"Facts the rule cannot decide without: complete_history, known_target."`
	Risk    string     `yaml:"risk" doc:"low, medium (default), high or critical."`
	Mode    string     `yaml:"mode" doc:"monitor: the rule decides as usual, but its refusal lets the call run and is recorded as would_deny; enforce (the default)."`
}

// ExprKey is the key of the rule's expression: "deny", or "ask" for a
// rule that asks for a person.
func (r RuleSpec) ExprKey() string {
	if r.Deny == "" && r.Ask != "" {
		return "ask"
	}
	return "deny"
}

// Expr is the rule's expression, deny's or ask's.
func (r RuleSpec) Expr() string {
	if r.ExprKey() == "ask" {
		return r.Ask
	}
	return r.Deny
}

// MatchSpec selects calls.
type MatchSpec struct {
	Tool  string `yaml:"tool" doc:"A glob on the tool name, as mcp__github__*."`
	Actor string `yaml:"actor" doc:"A glob on the actor, as kind:id (agent:*)."`
}
