package rule

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// A Section is a part of the policy file that a rule family reads, under
// one top-level key: the type it is written in (a struct with yaml and doc
// tags, from which strict decoding and the JSON Schema are derived), the
// effective settings before any file, and how one file's values merge into
// them. Each setting is validated there, once.
type Section struct {
	Key string // the top-level key, as "files"
	Doc string // the schema's description of the key
	// YAML is the section as the default policy file writes it: its key
	// line and its settings, commented.
	YAML func() string
	// Show sums up what the section holds by default, for policy show.
	Show func() []string

	typ   reflect.Type // the file's struct type
	init  func() any   // a pointer to the initial effective settings
	merge func(eff, file any, l *Layer)
}

// NewSection declares a section written as F whose effective settings are
// E: init gives E before any file (nil: E's zero value), merge folds one
// file's F into it. F must be a struct.
func NewSection[F, E any](key, doc string, init func() E, merge func(eff *E, f *F, l *Layer)) *Section {
	return &Section{Key: key, Doc: doc, typ: reflect.TypeFor[F](),
		init: func() any {
			e := new(E)
			if init != nil {
				*e = init()
			}
			return e
		},
		merge: func(eff, file any, l *Layer) { merge(eff.(*E), file.(*F), l) },
	}
}

// Type is the Go type the section is written in.
func (s *Section) Type() reflect.Type { return s.typ }

// Initial returns a pointer to the effective settings before any file.
func (s *Section) Initial() any { return s.init() }

// Merge folds file (a pointer to the section's type) into eff (a pointer
// to its effective settings).
func (s *Section) Merge(eff, file any, l *Layer) { s.merge(eff, file, l) }

// Layer is what a section's merge sees of one policy file: whether it may
// widen, and where to report problems and the origin of each setting.
type Layer struct {
	Kind    string // user, project, flag, managed
	Trusted bool   // the user's file: it configures the built-in rules; every other file only narrows

	// Section is the key of the section being merged; keys given to the
	// methods below are relative to it.
	Section string
	// Report and Origin are the merging policy's: a problem at a place in
	// the file, and where a part of the effective policy came from.
	Report func(msg string, keys ...any)
	Origin func(key, value string, keys ...any)
}

// Bad reports a problem at the section's keys.
func (l *Layer) Bad(msg string, keys ...any) { l.Report(msg, append([]any{l.Section}, keys...)...) }

// Note records that the setting key (below the section) has value, from
// the place of keys.
func (l *Layer) Note(key, value string, keys ...any) {
	l.Origin(l.Section+"."+key, value, append([]any{l.Section}, keys...)...)
}

// Shorten merges a list that files after the user's may only shorten. The
// user's file replaces it; any other keeps what both hold. unset is what
// the list is worth while no file has set it (cur is nil): nil means it is
// unbounded, so the file's list is taken as it is.
func Shorten(l *Layer, cur, in []string, unset func() []string) []string {
	switch {
	case l.Trusted:
		return slices.Clone(in)
	case cur == nil && unset == nil:
		return slices.Clone(in)
	case cur == nil:
		cur = unset()
	}
	out := []string{}
	for _, x := range cur {
		if slices.Contains(in, x) {
			out = append(out, x)
		}
	}
	return out
}

// Lower merges a limit that files after the user's may only lower: in
// counts when it is set (above zero) and the user's file gives it, no limit
// is set yet, or it is below the current one.
func Lower[T cmp.Ordered](l *Layer, cur, in T) (T, bool) {
	var zero T
	if in > zero && (l.Trusted || cur == zero || in < cur) {
		return in, true
	}
	return cur, false
}

// Append merges a list that every file adds to: each entry that check
// accepts is appended (and noted); each it refuses is a problem.
func Append(l *Layer, cur, in []string, key string, check func(string) error) []string {
	for i, x := range in {
		if err := check(x); err != nil {
			l.Bad(fmt.Sprintf("%s.%s: %v", l.Section, key, err), key, i)
			continue
		}
		cur = append(cur, x)
		l.Note(key, x, key, i)
	}
	return cur
}

// Each reports every entry of a list that check refuses, as key[i]; it
// says whether all passed.
func Each(l *Layer, in []string, key string, check func(string) error) bool {
	ok := true
	for i, x := range in {
		if err := check(x); err != nil {
			l.Bad(fmt.Sprintf("%s.%s: %v", l.Section, key, err), key, i)
			ok = false
		}
	}
	return ok
}

// Duration is a time.Duration written as "90s" or "2m" in a policy file.
type Duration time.Duration

// UnmarshalText reads "90s".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes "1m30s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }
