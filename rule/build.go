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
