package rule

import (
	"context"
	"fmt"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/toolpath"
)

// Build is what the families build their rules in, in order: the
// environment they run in, the effective settings of every section, and
// what the families before have added. Families never import each other:
// what one needs of another passes through here (the paths and hosts a
// shell command touches, the files a call reads).
type Build struct {
	Home       string            // the user's home directory
	TempDirs   []string          // nil: the temporary directories the settings say
	Vars       map[string]string // the shell analyzer's variables; nil: from the environment
	FS         toolpath.FS       // nil: the live filesystem
	LookupHome func(name string) (string, error)
	Now        func() time.Time
	Tool       func(name string) *veto.Descriptor // a described tool, or nil
	// Supervisor, when set, is the command line that runs a command under
	// veto exec from this process (the veto binary, exec, and the flags
	// that name this state), ready for --run RUN -- ARGV. Nil: a command
	// cannot be run supervised from here (no kernel support, no binary, a
	// replay or a test).
	Supervisor []string
	// Supervising says the gate decides for veto exec: each program as it
	// starts, each file as it opens. What a static analysis cannot see is
	// then decided when it happens, so it is no refusal of its own.
	Supervising bool
	// Supervision, when set, is filled by the families for veto exec's
	// supervisor: what it must decide and what its Landlock floor is.
	Supervision *Supervision

	settings map[string]any

	Rules      []veto.Rule
	Resolvers  []veto.Resolver
	Learners   []veto.Learner
	Patchers   []veto.Patcher
	Extractors []veto.PathExtractor // paths a call touches that its roles do not name (a command's files)
	// Hosts give the hosts a call reaches that its url roles do not name
	// (a command's), "" for one that cannot be known statically.
	Hosts []func(in *veto.Input) []string
	// Reads give the canonical paths a call itself reads.
	Reads []func(ctx context.Context, in *veto.Input) ([]string, error)
}

// NewBuild starts a build over the effective settings, by section key.
func NewBuild(settings map[string]any) *Build { return &Build{settings: settings} }

// Settings returns the effective settings of the section with the key,
// which must have type E (as the section was declared).
func Settings[E any](b *Build, key string) (E, error) {
	var zero E
	v, ok := b.settings[key]
	if !ok {
		return zero, fmt.Errorf("rule: no settings for section %q", key)
	}
	e, ok := v.(*E)
	if !ok {
		return zero, fmt.Errorf("rule: section %q holds %T, not %T", key, v, zero)
	}
	return *e, nil
}

// Run builds every registered family in order.
func (b *Build) Run() error {
	for _, f := range Families() {
		if err := f.Build(b); err != nil {
			return fmt.Errorf("%s rules: %w", f.Name, err)
		}
	}
	return nil
}

// Supervision is what veto exec's supervisor needs of the rules beside
// their decisions, filled in by the file rules.
type Supervision struct {
	// ReadMatters reports whether a read of a resolved absolute path must
	// be decided: it could hold credentials. Every other read is allowed
	// undecided and unrecorded, so that a program's many opens cost
	// little.
	ReadMatters func(path string) bool
	// Floor gives the Landlock floor of a command run in cwd: the write
	// roots (the workspace, the temporary directories, the extra roots)
	// and the credential directories that exist.
	Floor func(cwd string) (writeRoots, denyRead []string, err error)
}
