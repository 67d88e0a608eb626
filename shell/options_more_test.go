package shell_test

import (
	"slices"
	"testing"

	"github.com/vetohq/veto/shell"
)

// An option that takes a value takes the next word: the value is neither
// a file the command reads, a host it reaches (a proxy is reached) nor
// the command it wraps.
func TestOptionValuesAreNotOperands(t *testing.T) {
	for _, tc := range []struct {
		src      string
		files    []string // paths read or written, in the report's order
		hosts    []string
		programs []string
	}{
		{src: "grep --regexp foo notes.txt", files: []string{"notes.txt"}, programs: []string{"grep"}},
		{src: "grep --file pats.txt notes.txt", files: []string{"pats.txt", "notes.txt"}, programs: []string{"grep"}},
		{src: "tail --lines 5 log.txt", files: []string{"log.txt"}, programs: []string{"tail"}},
		{src: "unexpand --tabs 4 a.txt", files: []string{"a.txt"}, programs: []string{"unexpand"}},
		{src: "find src -regex x -print", files: []string{"src"}, programs: []string{"find"}},
		{src: "curl --socks5 proxy.example:1080 https://a.example/", hosts: []string{"proxy.example", "a.example"}, programs: []string{"curl"}},
		{src: "wget --user bob https://a.example/", hosts: []string{"a.example"}, programs: []string{"wget"}},
		{src: "sudo --host h.example ls", programs: []string{"sudo", "ls"}},
		{src: "parallel --blocksize 1M echo ::: a", programs: []string{"parallel", "echo"}},
	} {
		r := shell.Analyze(tc.src, env)
		var files, hosts []string
		for _, f := range r.Files {
			files = append(files, f.Path)
		}
		for _, h := range r.Hosts {
			hosts = append(hosts, h.Host)
		}
		if !slices.Equal(files, tc.files) || !slices.Equal(hosts, tc.hosts) || !slices.Equal(r.Programs, tc.programs) {
			t.Errorf("%q: files %q hosts %q programs %q; want %q %q %q (findings %+v)", tc.src, files, hosts, r.Programs, tc.files, tc.hosts, tc.programs, r.Findings)
		}
	}
}
