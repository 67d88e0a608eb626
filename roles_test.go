package veto_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vetohq/veto"
)

// An argument key has the role of the parameter it spells, whatever its
// letter case (issue 27: "File_Path" was not judged): the exact parameter
// first, else every one equal to it but for case, as strings.EqualFold
// (Go's encoding/json) reads it.
func TestRolesInAnyLetterCase(t *testing.T) {
	d := &veto.Descriptor{Name: "t", Params: map[string]veto.Role{
		"file_path": veto.RolePath, "source": veto.RoleSourcePath,
		"Mode": veto.RoleContent, "mode": veto.RoleURL, // two parameters one case apart
	}}
	for _, tc := range []struct {
		key  string
		role veto.Role
		has  []veto.Role // the roles HasRole reports, of path, source_path, content, url
	}{
		{"file_path", veto.RolePath, []veto.Role{veto.RolePath}},
		{"File_Path", veto.RolePath, []veto.Role{veto.RolePath}},
		{"FILE_PATH", veto.RolePath, []veto.Role{veto.RolePath}},
		{"ſource", veto.RoleSourcePath, []veto.Role{veto.RoleSourcePath}}, // U+017F folds to s, as encoding/json reads it
		{"filepath", "", nil},
		{"file-path", "", nil},
		{"mode", veto.RoleURL, []veto.Role{veto.RoleURL}},         // exact wins
		{"Mode", veto.RoleContent, []veto.Role{veto.RoleContent}}, // exact wins
		{"MODE", veto.RoleContent, []veto.Role{veto.RoleContent, veto.RoleURL}},
		{"other", "", nil},
	} {
		if got := d.RoleOf(tc.key); got != tc.role {
			t.Errorf("RoleOf(%q) = %q, want %q", tc.key, got, tc.role)
		}
		var has []veto.Role
		for _, r := range []veto.Role{veto.RolePath, veto.RoleSourcePath, veto.RoleContent, veto.RoleURL} {
			if d.HasRole(tc.key, r) {
				has = append(has, r)
			}
		}
		if !slices.Equal(has, tc.has) {
			t.Errorf("HasRole(%q) for %v, want %v", tc.key, has, tc.has)
		}
	}
	args := map[string]any{"file_path": "a", "FILE_PATH": "b", "File_Path": "c", "content": "d", "source": "e"}
	got := d.ArgsWith(args, veto.RolePath)
	want := []veto.Arg{{Key: "FILE_PATH", Param: "file_path", Value: "b"}, {Key: "File_Path", Param: "file_path", Value: "c"},
		{Key: "file_path", Param: "file_path", Value: "a"}}
	if !slices.Equal(got, want) {
		t.Fatalf("ArgsWith(path) = %v, want %v", got, want)
	}
	var nilDesc *veto.Descriptor
	if nilDesc.HasRole("file_path", veto.RolePath) || nilDesc.RoleOf("x") != "" || nilDesc.ArgsWith(args, veto.RolePath) != nil {
		t.Fatal("a nil descriptor gave a role")
	}
}

// A person is shown an argument in another case under the role the rules
// judge it by, and a credential write's content so spelled is masked.
func TestShowCallRolesInAnyCase(t *testing.T) {
	d := &veto.Descriptor{Name: "Write", Params: map[string]veto.Role{"file_path": veto.RolePath, "body": veto.RoleContent}}
	c := &veto.Call{Tool: "Write", Args: map[string]any{"zz": 1, "File_Path": "/home/ann/.aws/credentials", "BODY": "aws_secret_access_key = canary words"}}
	s := veto.ShowCall(c, d, veto.Target{})
	if len(s.Fields) != 3 || s.Fields[0].Name != "File_Path" || s.Fields[0].Role != veto.RolePath ||
		s.Fields[1].Name != "BODY" || s.Fields[1].Role != veto.RoleContent {
		t.Fatalf("fields %+v", s.Fields)
	}
	if v := s.Fields[1].Value; !strings.HasPrefix(v, "[masked: the content of a write to a credential file") || strings.Contains(v, "canary") {
		t.Fatalf("the content of a credential write is shown: %q", v)
	}
}

// Input resume replaces the model's value in every spelling a tool could
// read as the field: the person's answer is the one the tool gets.
func TestResumeInputReplacesEverySpelling(t *testing.T) {
	f := newFixture(t, veto.Config{Tools: []veto.Descriptor{{Name: "ask", Params: map[string]veto.Role{"answer": veto.RoleInput}}}})
	run := veto.Run{Ref: "input-case", Fresh: true}
	c := inRun(run, "q", "ask", map[string]any{"Answer": "the model's", "ANSWER": "the model's too", "other": 1})
	s, err := f.g.Suspend(ctx, c, veto.AwaitInput, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := f.g.ResumeInput(ctx, s, map[string]any{"answer": "the person's"})
	if !res.Execute {
		t.Fatalf("refused: %+v", res.Verdict)
	}
	want := map[string]any{"answer": "the person's", "other": 1}
	if len(res.Call.Args) != len(want) || res.Call.Args["answer"] != want["answer"] || res.Call.Args["other"] != 1 {
		t.Fatalf("resumed with %v, want %v", res.Call.Args, want)
	}
}

// FuzzRolesAsEncodingJSONReads holds HasRole to the reading it stands
// for: a key that Go's encoding/json would decode into a field named
// param is an argument with param's role, and one it would not is not
// (for a descriptor of that one parameter).
func FuzzRolesAsEncodingJSONReads(f *testing.F) {
	for _, s := range [][2]string{
		{"file_path", "File_Path"}, {"file_path", "file_path"}, {"source", "ſource"}, {"kelvin", "\u212aelvin"},
		{"path", "paths"}, {"ß", "ẞ"}, {"url", "URL"}, {"a", "b"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, param, key string) {
		if param == "" || !utf8.ValidString(param) || !utf8.ValidString(key) || strings.ContainsAny(param, ",\"\\`") {
			return
		}
		typ := reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeFor[string](), Tag: reflect.StructTag(`json:"` + param + `"`)}})
		fills := func(k string) bool {
			b, err := json.Marshal(map[string]string{k: "x"})
			if err != nil {
				t.Fatal(err)
			}
			v := reflect.New(typ)
			if err := json.Unmarshal(b, v.Interface()); err != nil {
				t.Fatal(err)
			}
			return v.Elem().Field(0).String() == "x"
		}
		if !fills(param) {
			return // a tag encoding/json does not take as the name
		}
		d := &veto.Descriptor{Name: "t", Params: map[string]veto.Role{param: veto.RolePath}}
		if got, want := d.HasRole(key, veto.RolePath), fills(key); got != want {
			t.Fatalf("param %q, key %q: HasRole %v, encoding/json fills the field: %v", param, key, got, want)
		}
	})
}
