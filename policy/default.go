package policy

import (
	"fmt"
	"strings"

	"github.com/vetohq/veto/rules/files"
)

// DefaultYAML is the built-in default as a commented policy file a user
// can start from. Loaded as a policy, it changes nothing: the lists it
// shows are the defaults, and the keys that would change something are
// commented out.
func DefaultYAML() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	list := func(indent string, items []string) {
		for _, it := range items {
			w("%s- %q\n", indent, it)
		}
	}
	w(`# veto.yaml: veto's built-in default, written out.
#
# Where policy files live, in order: the built-in default, the user's
# ($XDG_CONFIG_HOME/veto/veto.yaml), the project's (.veto/veto.yaml), the one given
# with --policy, and the managed one (/etc/veto/veto.yaml). The user's file configures
# the built-in rules; every later file can only narrow: add rules and patterns,
# shorten allow-lists, never turn a rule off. Check a file with: veto validate FILE
version: 1

# Built-in rules, in the order they run: %s.
builtin:
  off: []            # the user's file may list rule ids to turn off

files:
  # Write roots: the workspace (the project directory the client reports, else the
  # git top level of the call's cwd, else the cwd) and the temporary directories.
  extra_roots: []    # more roots, absolute or ~/...; only the user's file adds them
  # temp_dirs: ["/tmp", "/var/tmp"]   # default: $TMPDIR, /tmp, /var/tmp

  # Patterns: * ? [...] within a segment, ** for any number of segments, /... absolute,
  # ~/... under the home directory, anything else at any depth; !pattern excludes.
  # Every file's lists add to these.
  protected:         # inside the roots, not writable by any tool
`, strings.Join(builtinRuleIDs(), ", "))
	list("    ", files.DefaultProtected)
	w("  persistence:       # anywhere: files that make something run later\n")
	list("    ", files.DefaultPersistence)
	w("  credentials:       # anywhere: neither read nor written\n")
	list("    ", files.DefaultCredentials)
	w(`  # manifest: ["src/main.go"]        # the only files calls may write
  # write_scope: ["src/**", "docs/*.md"]  # patterns every written path must match

shell:
  # interpreters: [bash, sh, python3]   # default: any interpreter or shell
  max_depth: 5       # how deeply bash -c, eval, xargs ... may nest
  # default_timeout: 2m               # given to an allowed command that names none

egress:              # where calls may reach; link-local and metadata addresses never
  mode: open         # open: any other host; allowlist: only the hosts below and those
                     # a person adds to a run with: veto egress allow HOST --run R
  # allow: [api.example.com, "*.docs.example", "ci.example:8443", 10.0.0.0/8]

# sequence:          # rules over what the run already executed (off until set)
#   private: ["secrets/**"]          # once read, no call may reach the network
#   max_calls: {"mcp__github__*": 20}
#   max_failed_writes: 3

# tools:             # descriptors for tools veto does not know
#   mcp__db__query:
#     params: {sql: content, out: path}
#     capabilities: [reads, writes, network]

offer:
  require_registered: false   # true refuses tools without a descriptor
  unavailable: []             # tools switched off in every run
  # actors:                   # which tools an actor may use (kind:id, kind:*, *)
  #   "agent:*": [Read, Grep, Glob]

approve: false       # true: hooks answer allow for the user (skipping the client's prompt); user's file only

# rules:             # your own rules, in CEL; deny is true when the call must be refused
#   - id: no-prod-hosts
#     match: {tool: Bash}
#     deny: 'args.command.contains("prod.internal")'
#     reason: production_host
#     message: Commands against production need a person.
#     risk: high
`)
	return b.String()
}
