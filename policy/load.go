package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/vetohq/veto/rule"
	"go.yaml.in/yaml/v3"
)

// Problem is one thing wrong with a policy file, at a place in it.
type Problem struct {
	File      string
	Line, Col int // 0 when the problem is the whole file
	Msg       string
}

func (p Problem) String() string {
	switch {
	case p.Line == 0:
		return p.File + ": " + p.Msg
	case p.Col == 0:
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Msg)
}

// Problems is every problem found; as an error it lists them one a line.
type Problems []Problem

func (ps Problems) Error() string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Layer is one policy file in its place in the order.
type Layer struct {
	Kind string // builtin, user, project, flag, managed
	Path string
	File File
	doc  *yaml.Node
	raw  []byte
}

// Layer kinds, in order of precedence.
const (
	KindBuiltin = "builtin"
	KindUser    = "user"
	KindProject = "project"
	KindFlag    = "flag"
	KindManaged = "managed"
	// KindRevision is a file of a revision pushed to the shared database
	// (veto policy push): the operator's policy for every instance on it,
	// trusted as the user's file is.
	KindRevision = "revision"
)

// ReadFile reads one policy file. A file that does not exist is
// (nil, nil) when optional.
func ReadFile(kind, path string, optional bool) (*Layer, error) {
	b, err := os.ReadFile(path)
	if optional && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, Problems{{File: path, Msg: "cannot read the policy file: " + errText(err)}}
	}
	return Parse(kind, path, b)
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse reads a policy file's bytes, strictly.
func Parse(kind, path string, b []byte) (*Layer, error) {
	l := &Layer{Kind: kind, Path: path, raw: b}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return l, nil // an empty file says nothing
		}
		return nil, Problems{yamlProblem(path, err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Problems{{File: path, Line: extra.Line, Col: extra.Column, Msg: "a policy file holds one YAML document; this is a second"}}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	l.doc = root
	var probs Problems
	checkTop(root, path, &probs)
	if len(probs) > 0 {
		return nil, probs
	}
	if err := root.Decode(&l.File); err != nil {
		return nil, Problems{yamlProblem(path, err)}
	}
	if err := decodeSections(root, &l.File); err != nil {
		return nil, Problems{yamlProblem(path, err)}
	}
	if l.File.Version != 0 && l.File.Version != 1 {
		n := find(root, "version")
		return nil, Problems{at(path, n, fmt.Sprintf("version %d is not known; this veto reads version 1", l.File.Version))}
	}
	return l, nil
}

// yamlProblem turns a YAML syntax error into a Problem with its line.
func yamlProblem(path string, err error) Problem {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := 0
	if strings.HasPrefix(msg, "line ") {
		if _, scanErr := fmt.Sscanf(msg, "line %d:", &line); scanErr == nil {
			msg = strings.TrimSpace(msg[strings.IndexByte(msg, ':')+1:])
		}
	}
	return Problem{File: path, Line: line, Msg: "not valid YAML: " + msg}
}

func at(path string, n *yaml.Node, msg string) Problem {
	if n == nil {
		return Problem{File: path, Msg: msg}
	}
	return Problem{File: path, Line: n.Line, Col: n.Column, Msg: msg}
}

var durationType = reflect.TypeFor[rule.Duration]()

// topKeys are the top-level keys of a policy file, each with the Go type
// it is written in: File's own, with the rule families' sections after
// builtin.
func topKeys() (keys []string, types map[string]reflect.Type) {
	types = map[string]reflect.Type{}
	t := reflect.TypeFor[File]()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		keys, types[tag] = append(keys, tag), f.Type
		if tag == "builtin" {
			for _, s := range rule.Sections() {
				keys, types[s.Key] = append(keys, s.Key), s.Type()
			}
		}
	}
	return keys, types
}

// checkTop checks a file's top-level mapping against topKeys.
func checkTop(n *yaml.Node, path string, probs *Problems) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.MappingNode {
		*probs = append(*probs, at(path, n, "the policy: want a mapping of keys"))
		return
	}
	known, types := topKeys()
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch t, ok := types[k.Value]; {
		case seen[k.Value]:
			*probs = append(*probs, at(path, k, fmt.Sprintf("the policy: the key %q appears twice", k.Value)))
		case !ok:
			*probs = append(*probs, at(path, k, fmt.Sprintf("the policy: unknown key %q; known keys are %s", k.Value, strings.Join(known, ", "))))
		default:
			checkNode(v, t, k.Value, path, probs)
		}
		seen[k.Value] = true
	}
}

// decodeSections decodes each family's section the file writes.
func decodeSections(root *yaml.Node, f *File) error {
	for _, s := range rule.Sections() {
		n := find(root, s.Key)
		if n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			continue
		}
		v := reflect.New(s.Type())
		if err := n.Decode(v.Interface()); err != nil {
			return err
		}
		if f.Sections == nil {
			f.Sections = map[string]any{}
		}
		f.Sections[s.Key] = v.Interface()
	}
	return nil
}

// checkNode checks n against the Go type t: known keys, no duplicates,
// the right kind of node and scalar. where names the place, as
// "files.protected[2]".
func checkNode(n *yaml.Node, t reflect.Type, where, path string, probs *Problems) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	name := where
	if name == "" {
		name = "the policy"
	}
	bad := func(node *yaml.Node, msg string) { *probs = append(*probs, at(path, node, name+": "+msg)) }
	switch {
	case t == durationType:
		if d, err := time.ParseDuration(n.Value); n.Kind != yaml.ScalarNode || err != nil || d < 0 {
			bad(n, "want a duration such as 90s or 2m")
		}
	case t.Kind() == reflect.Struct:
		checkStruct(n, t, where, path, probs, bad)
	case t.Kind() == reflect.Map:
		checkMap(n, t, where, path, probs, bad)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			bad(n, "want a list")
			return
		}
		for i, v := range n.Content {
			checkNode(v, t.Elem(), fmt.Sprintf("%s[%d]", where, i), path, probs)
		}
	case t.Kind() == reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
			bad(n, "want text (quote it if it looks like a number or true/false)")
		}
	case t.Kind() == reflect.Int:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			bad(n, "want a whole number")
		}
	case t.Kind() == reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			bad(n, "want true or false")
		}
	}
}

// checkStruct checks a mapping against a struct's yaml keys.
func checkStruct(n *yaml.Node, t reflect.Type, where, path string, probs *Problems, bad func(*yaml.Node, string)) {
	if n.Kind != yaml.MappingNode {
		bad(n, "want a mapping of keys")
		return
	}
	fields := map[string]reflect.StructField{}
	var known []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag != "" && tag != "-" {
			fields[tag] = f
			known = append(known, tag)
		}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := fields[k.Value]
		switch {
		case seen[k.Value]:
			bad(k, fmt.Sprintf("the key %q appears twice", k.Value))
		case !ok:
			bad(k, fmt.Sprintf("unknown key %q; known keys are %s", k.Value, strings.Join(known, ", ")))
		default:
			checkNode(v, f.Type, join(where, k.Value), path, probs)
		}
		seen[k.Value] = true
	}
}

// checkMap checks a mapping of free keys to values of t's element type.
func checkMap(n *yaml.Node, t reflect.Type, where, path string, probs *Problems, bad func(*yaml.Node, string)) {
	if n.Kind != yaml.MappingNode {
		bad(n, "want a mapping")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case seen[k.Value]:
			bad(k, fmt.Sprintf("the key %q appears twice", k.Value))
		case k.Kind != yaml.ScalarNode || k.Value == "":
			bad(k, "keys must be non-empty text")
		default:
			checkNode(v, t.Elem(), join(where, k.Value), path, probs)
		}
		seen[k.Value] = true
	}
}

func join(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}

// find returns the node at a path of keys (string) and indexes (int), or
// nil.
func find(n *yaml.Node, path ...any) *yaml.Node {
	for _, p := range path {
		if n == nil {
			return nil
		}
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		switch p := p.(type) {
		case string:
			var next *yaml.Node
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == p {
						next = n.Content[i+1]
					}
				}
			}
			n = next
		case int:
			if n.Kind != yaml.SequenceNode || p >= len(n.Content) {
				return nil
			}
			n = n.Content[p]
		}
	}
	return n
}

// NamedFile is one file of a pushed revision: the name it was pushed
// under and its bytes.
type NamedFile struct {
	Name string
	Body []byte
}

// LoadRevision reads and merges a pushed revision's files, in their
// order, after the built-in default, as trusted as the user's file: the
// operator's policy for every instance on the shared database, and
// nothing of the instance's own files. Its Revision is a hash of the
// files' names and bytes, the same on every instance.
func LoadRevision(files []NamedFile, c Compiler) (*Policy, error) {
	layers := []*Layer{{Kind: KindBuiltin, Path: "builtin"}}
	var probs Problems
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f.Name] {
			probs = append(probs, Problem{File: f.Name, Msg: "a revision holds one file of each name; this name is given twice"})
			continue
		}
		seen[f.Name] = true
		l, err := Parse(KindRevision, f.Name, f.Body)
		if ps, ok := err.(Problems); ok {
			probs = append(probs, ps...)
			continue
		}
		layers = append(layers, l)
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return Merge(layers, c)
}
