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

import "time"

// File is one policy file, as written.
type File struct {
	Version  int                 `yaml:"version" doc:"The shape of this file. Only 1 exists; omitted means 1."`
	Builtin  *Builtin            `yaml:"builtin" doc:"Which built-in rules are on."`
	Files    *FileRules          `yaml:"files" doc:"Parameters of the file rules (write roots, protected locations, persistence targets, credentials, manifest, write scope)."`
	Shell    *ShellRules         `yaml:"shell" doc:"Parameters of the command rules."`
	Egress   *EgressRules        `yaml:"egress" doc:"Where calls may reach on the network (net.egress and shell.egress)."`
	Sequence *SequenceRules      `yaml:"sequence" doc:"Rules over what the run already executed; each denies history_incomplete when the record cannot prove what ran."`
	Tools    map[string]ToolSpec `yaml:"tools" doc:"Descriptors for tools veto does not know, by tool name (mcp__server__tool): which parameters are paths, URLs, commands or content, and what the tool can do."`
	Offer    *OfferSpec          `yaml:"offer" doc:"Which tools take part in a run at all."`
	Rules    []RuleSpec          `yaml:"rules" doc:"Your own rules, in CEL."`
	Approve  bool                `yaml:"approve" doc:"When true, an allowed call is approved for the user: hooks answer allow and the client skips its own permission prompt. Only the user's file may set it."`
}

// Builtin turns built-in rules off.
type Builtin struct {
	Off []string `yaml:"off" doc:"Ids of built-in rules to turn off. Only the user's file may turn a rule off."`
}

// FileRules are the file rules' parameters.
type FileRules struct {
	ExtraRoots  []string `yaml:"extra_roots" doc:"Write roots besides the workspace and the temporary directories (absolute or ~/...). Only the user's file may add roots; later files can only remove them."`
	TempDirs    []string `yaml:"temp_dirs" doc:"The temporary directories that are write roots (default: $TMPDIR, /tmp, /var/tmp). Later files can only remove them."`
	Protected   []string `yaml:"protected" doc:"More locations inside the roots that may not be written (patterns)."`
	Persistence []string `yaml:"persistence" doc:"More files that make something run later (patterns)."`
	Credentials []string `yaml:"credentials" doc:"More files that hold secrets (patterns)."`
	Manifest    []string `yaml:"manifest" doc:"The only files calls may write (relative to the workspace, absolute, or ~/...)."`
	WriteScope  []string `yaml:"write_scope" doc:"Patterns every written path must match (relative to the workspace, or absolute)."`
}

// ShellRules are the command rules' parameters.
type ShellRules struct {
	Interpreters   []string `yaml:"interpreters" doc:"The only interpreters and shells a command may start (default: any). Later files can only shorten the list."`
	MaxDepth       int      `yaml:"max_depth" doc:"How deeply commands may nest (bash -c, eval, xargs, ...); default 5. Later files can only lower it."`
	DefaultTimeout Duration `yaml:"default_timeout" doc:"A timeout given to an allowed command that names none, as 90s or 2m."`
}

// EgressRules are the egress rules' parameters.
type EgressRules struct {
	Mode  string   `yaml:"mode" doc:"open (the default: every host but link-local and cloud metadata addresses) or allowlist (only the hosts in allow, and those a person adds to a run with veto egress allow; a host veto cannot determine statically is denied). Only the user's file may set open over another file's allowlist."`
	Allow []string `yaml:"allow" doc:"The allow-list: host names, wildcard domains (*.example.com, below example.com), host:port, addresses and CIDR ranges. Later files can only remove entries."`
}

// SequenceRules are the history rules' parameters.
type SequenceRules struct {
	Private         []string       `yaml:"private" doc:"Patterns (as files.protected) for private material: once the run has read one (or tried: a failed or pending read counts), no call may reach the network."`
	MaxCalls        map[string]int `yaml:"max_calls" doc:"Most calls a run may make, by tool name or glob (mcp__github__*). Later files can only lower a limit."`
	MaxFailedWrites int            `yaml:"max_failed_writes" doc:"Most failed writes to one target per run (a failed write may have touched it). Later files can only lower it."`
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
	Reason  string     `yaml:"reason" doc:"The reason code of a denial, in the id format."`
	Message string     `yaml:"message" doc:"One sentence for a person; it must not quote arguments."`
	Needs   []string   `yaml:"needs" doc:"Facts the rule cannot decide without: complete_history, known_target."`
	Risk    string     `yaml:"risk" doc:"low, medium (default), high or critical."`
}

// MatchSpec selects calls.
type MatchSpec struct {
	Tool  string `yaml:"tool" doc:"A glob on the tool name, as mcp__github__*."`
	Actor string `yaml:"actor" doc:"A glob on the actor, as kind:id (agent:*)."`
}

// Duration is a time.Duration written as "90s" or "2m".
type Duration time.Duration
