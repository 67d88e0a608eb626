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
		{src: "systemctl --root /mnt enable a.service", files: []string{"/etc/systemd/system/a.service"}, programs: []string{"systemctl"}},
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

// Decoding what a command builds: a hex escape at the end of an ANSI-C
// string, printf's %% piped into a shell, and the proxy go env -w sets
// (go env alone sets none).
func TestDecodedWordsAndSettings(t *testing.T) {
	for _, tc := range []struct {
		src   string
		files []string
		hosts []string
	}{
		{src: `cat $'a\x4'`, files: []string{"a\x04"}},
		{src: `cat $'b\u41'`, files: []string{"bA"}},
		{src: `printf 'cat 100%%' | sh`, files: []string{"100%"}},
		{src: "go env -w GOPROXY=https://p.example", hosts: []string{"p.example"}},
		{src: "go env"},
		{src: "go env -json"},
	} {
		r := shell.Analyze(tc.src, env)
		var files, hosts []string
		for _, f := range r.Files {
			files = append(files, f.Path)
		}
		for _, h := range r.Hosts {
			hosts = append(hosts, h.Host)
		}
		if !slices.Equal(files, tc.files) || !slices.Equal(hosts, tc.hosts) {
			t.Errorf("%q: files %q hosts %q; want %q %q", tc.src, files, hosts, tc.files, tc.hosts)
		}
	}
}

// What interpreted code opens for writing is a write (PHP's fopen,
// Node's openSync, Python's open); a host with more than one colon is an
// IPv6 address, not a host and a port.
func TestCodeOpensAndIPv6Hosts(t *testing.T) {
	for _, src := range []string{`php -r 'fopen("/etc/x", "w");'`, `node -e 'fs.openSync("/etc/x", "w")'`, `python3 -c 'open("/etc/x", "w")'`} {
		r := shell.Analyze(src, env)
		if len(r.Files) != 1 || r.Files[0].Path != "/etc/x" || !r.Files[0].Write {
			t.Errorf("%s: files %+v, want a write of /etc/x", src, r.Files)
		}
	}
	for src, want := range map[string]string{"ssh fe80::1 ls": "fe80::1", "ssh h.example:22 ls": "h.example", "git clone ssh://[::1]:22/r": "::1"} {
		r := shell.Analyze(src, env)
		if len(r.Hosts) != 1 || r.Hosts[0].Host != want {
			t.Errorf("%s: hosts %+v, want %s", src, r.Hosts, want)
		}
	}
}

// A read veto cannot place is reported unknown, with its pattern, and
// with the known paths it could be: the directory its known beginning
// names (never the root itself), and its known end below the home
// directory.
func TestUnknownReadsAndTheirCandidates(t *testing.T) {
	for src, want := range map[string][]string{
		"cat /$X":                 {"?/*"},
		"cat /etc/$X":             {"?/etc/*", "/etc"},
		"cat $X/.aws/credentials": {"?*/.aws/credentials", "~/.aws/credentials"},
	} {
		var got []string
		for _, f := range shell.Analyze(src, env).Files {
			if f.Unknown {
				got = append(got, "?"+f.Pattern)
			} else {
				got = append(got, f.Path)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", src, got, want)
		}
	}
}

// Option values are not options: find's -name -delete names a file called
// -delete; git's --git-dir DIR leaves the subcommand after it; push's
// -ofoo is a push option, not -o with -f -o -o.
func TestOptionValuesAreNotOptions(t *testing.T) {
	for src, want := range map[string]shell.Reason{
		"find . -name -delete":                   "",
		"find . -name x -delete":                 shell.FindDelete,
		"git --git-dir /tmp/r/.git reset --hard": shell.GitDestructive,
		"git push -ofoo origin main":             "",
		"git push -f origin main":                shell.GitDestructive,
	} {
		var got shell.Reason
		for _, f := range shell.Analyze(src, env).Findings {
			got = f.Reason
		}
		if got != want {
			t.Errorf("%s: %q, want %q", src, got, want)
		}
	}
}
