package files_test

import (
	"strings"
	"testing"
)

// An argument key in another letter case is the parameter it spells
// (issue 27: "File_Path" was not judged, and a tool that reads keys as
// Go's encoding/json does wrote where veto never looked). A call spelling
// one parameter twice has every spelling judged. A denial names the
// declared parameter, never the key the call spelled.
func TestArgumentKeysInAnyCase(t *testing.T) {
	w := newWorld(t, nil)
	run(t, w, []fileCase{
		{"write outside, mixed case", "Write", map[string]any{"File_Path": "$OUT/x.txt", "content": "x"}, roots},
		{"write outside, upper case", "Write", map[string]any{"FILE_PATH": "$OUT/x.txt", "content": "x"}, roots},
		{"write protected, mixed case", "Write", map[string]any{"fILE_pATH": "$WS/.git/config", "content": "x"}, protectedW},
		{"edit in the home, mixed case", "Edit", map[string]any{"File_path": "~/.bashrc", "old_string": "a", "new_string": "b"}, roots},
		{"read credential, mixed case", "Read", map[string]any{"File_Path": "~/.ssh/id_rsa"}, credW},
		{"twice, the second outside", "Write", map[string]any{"file_path": "$WS/src/ok.go", "FILE_PATH": "$OUT/x.txt", "content": "x"}, roots},
		{"twice, the first outside", "Write", map[string]any{"FILE_PATH": "$OUT/x.txt", "file_path": "$WS/src/ok.go", "content": "x"}, roots},
		{"mcp move, source in upper case", "mcp__filesystem__move_file", map[string]any{"SOURCE": "$OUT/notes.txt", "destination": "$WS/notes.txt"}, roots},
		{"mcp write, path in upper case", "mcp__filesystem__write_file", map[string]any{"PATH": "$OUT/x.txt", "content": "x"}, roots},
		{"mixed case inside the workspace", "Write", map[string]any{"File_Path": "$WS/src/new.go", "content": "x"}, allow},
	})
	t.Run("the message names the parameter, not the key", func(t *testing.T) {
		v := w.decide("Write", map[string]any{"fILE_pATH": "$OUT/x.txt", "content": "x"})
		if v.Allowed {
			t.Fatal("allowed")
		}
		if strings.Contains(v.Message, "fILE_pATH") {
			t.Fatalf("the message quotes the call's key: %q", v.Message)
		}
	})
}
