package glob

import (
	"path"
	"slices"
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"mcp__github__*", "mcp__github__create_issue", true},
		{"mcp__github__*", "mcp__gitlab__create_issue", false},
		{"mcp__*__query", "mcp__db__query", true},
		{"Read", "Read", true},
		{"Read", "read", false},
		{"*", "Bash", true},
		// A tool name is not a path: "*", "?" and classes take "/" too
		// (issue 27: "mcp__srv__*" missed a tool named "dir/tool").
		{"*", "a/b", true},
		{"mcp__srv__*", "mcp__srv__dir/tool", true},
		{"mcp__srv__*", "mcp__srv2__dir/tool", false},
		{"mcp__*__query", "mcp__a/b__query", true},
		{"mcp__*__query", "mcp__a/b__query/x", false},
		{"a?b", "a/b", true},
		{"a[/]b", "a/b", true},
		{"a[^x]b", "a/b", true},
		{"a[!-0]b", "a/b", true}, // a range holding "/"
		{"a[^!-0]b", "a/b", false},
		{`a\/b`, "a/b", true},
		{"a/*", "a/b/c", true},
		{"*/tool", "dir/tool", true},
		{"*/tool", "tool", false},
		{"**", "a/b/c", true}, // "**" is two stars: nothing more
		{"*x*y", "axbxcy", true},
		{"*x*y", "axbxcyz", false},
		{"é?", "éé", true},
		{"[é]", "é", true},
		{"*.[", "a.[", false}, // malformed after a match: nothing
		{"agent:*", "agent:researcher", true},
		{"agent:*", "user:alice", false},
		{"Ba?h", "Bash", true},
		{"[RW]*", "Write", true},
		{"[", "[", false}, // malformed: matches nothing
		{"", "", true},
		{"", "x", false},
	} {
		if got := Name(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Name(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, g := range []string{"mcp__github__*", "*", "Read", "a[bc]"} {
		if err := CheckName(g); err != nil {
			t.Errorf("CheckName(%q) = %v", g, err)
		}
	}
	for _, g := range []string{"", "[", "a[", "x\\"} {
		if CheckName(g) == nil {
			t.Errorf("CheckName(%q) accepted a malformed glob", g)
		}
	}
}

func TestPath(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"**/*.pem", "a/b/key.pem", true},
		{"**/*.pem", "key.pem", true},
		{"**/*.pem", "/etc/ssl/key.pem", true},
		{"**/*.pem", "key.pem.bak", false},
		{"*.pem", "a/key.pem", false},            // "*" stays within a segment
		{"/etc[^a]passwd", "/etc/passwd", false}, // and so does a class (path.Match lets "[^a]" match "/")
		{"/etc/[^a]*", "/etc/passwd", true},
		{"*.pem", "key.pem", true},
		{"src/**", "src", true}, // ** includes none
		{"src/**", "src/a/b", true},
		{"src/**", "srcx/a", false},
		{"/etc/**/passwd", "/etc/passwd", true},
		{"/etc/**/passwd", "/etc/a/b/passwd", true},
		{"/etc/**/passwd", "/usr/etc/passwd", false},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/y/z/c", false},
		{"**", "", true},
		{"**", "anything/at/all", true},
		{"/", "/", true},
		{"/", "", false},
		{"/**", "/", true},
		{"/etc/*", "etc/passwd", false}, // an absolute pattern, a relative string
		{"", "", true},
		{"", "a", false},
		// What a Set refuses matches nothing here (issue 27: "//**"
		// matched "/0" in a Set and not in Path, the fuzzer found).
		{"//**", "/0", false},
		{"//**", "//0", false},
		{"/etc/", "/etc", false},
		{"/etc/", "/etc/", false},
		{"a//b", "a//b", false},
		{"a/", "a/", false},
		{"/etc/[", "/etc/[", false},
	} {
		if got := Path(tc.pattern, tc.s); got != tc.want {
			t.Errorf("Path(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

// Many "**" (or "*") cost the product of the lengths: a pattern of 30
// against 200 segments answered in the time of the heat death of the
// universe when each "**" tried every split anew (the fuzzer hung on one).
func TestManyStarsAreCheap(t *testing.T) {
	pat := strings.Repeat("**/", 30) + "x"
	p := "/" + strings.Repeat("a/", 200) + "y"
	if Path(pat, p) {
		t.Fatalf("Path matched a path without its last segment")
	}
	s, err := Compile([]string{"/" + pat}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Match(p, ""); ok {
		t.Fatalf("a Set matched a path without its last segment")
	}
	if !Path(pat, p[:len(p)-1]+"x") {
		t.Fatalf("Path missed the path with its last segment")
	}
	if Name(strings.Repeat("*a", 100)+"b", strings.Repeat("a", 5000)) {
		t.Fatalf("Name matched a name without its last letter")
	}
}

func TestSet(t *testing.T) {
	const home = "/home/u"
	for _, tc := range []struct {
		name   string
		list   []string
		o      Options
		p      string
		anchor string
		want   string // the pattern that matched; "" for none
	}{
		{"any depth", []string{".env"}, Options{}, "/w/app/.env", "", ".env"},
		{"any depth, top", []string{".env"}, Options{}, "/.env", "", ".env"},
		{"any depth, other name", []string{".env"}, Options{}, "/w/.envrc", "", ""},
		{"any depth suffix", []string{"*.pem"}, Options{}, "/w/k.pem", "", "*.pem"},
		{"any depth prefix", []string{"id_rsa*"}, Options{}, "/h/.ssh/id_rsa.pub", "", "id_rsa*"},
		{"any depth glob", []string{"k?y.[pq]em"}, Options{}, "/a/key.qem", "", "k?y.[pq]em"},
		{"any depth, two segments", []string{".git/hooks"}, Options{}, "/w/.git/hooks", "", ".git/hooks"},
		{"any depth, two segments, below", []string{".git/hooks"}, Options{}, "/w/.git/hooks/pre-commit", "", ""},
		{"any depth tree", []string{".git/hooks/**"}, Options{}, "/w/.git/hooks/pre-commit", "", ".git/hooks/**"},
		{"absolute", []string{"/etc/**"}, Options{}, "/etc/passwd", "", "/etc/**"},
		{"absolute itself", []string{"/etc/**"}, Options{}, "/etc", "", "/etc/**"},
		{"absolute, sibling", []string{"/etc/**"}, Options{}, "/etcx/passwd", "", ""},
		{"absolute, deeper", []string{"/etc"}, Options{}, "/etc/passwd", "", ""},
		{"root", []string{"/"}, Options{}, "/", "", "/"},
		{"root, below", []string{"/"}, Options{}, "/a", "", ""},
		{"home", []string{"~/.ssh/**"}, Options{Home: home}, "/home/u/.ssh/id_ed25519", "", "~/.ssh/**"},
		{"home itself", []string{"~"}, Options{Home: home}, "/home/u", "", "~"},
		{"home, other user", []string{"~/.ssh/**"}, Options{Home: home}, "/home/v/.ssh/id_ed25519", "", ""},
		{"exclusion", []string{".env*", "!.env.example"}, Options{}, "/w/.env.example", "", ""},
		{"exclusion, other", []string{".env*", "!.env.example"}, Options{}, "/w/.env.local", "", ".env*"},
		{"first include named", []string{"*.key", "secret*"}, Options{}, "/w/secret.key", "", "*.key"},
		{"fold", []string{"/Users/U/.SSH/**"}, Options{Fold: true}, "/users/u/.ssh/config", "", "/Users/U/.SSH/**"},
		{"no fold", []string{"/Users/U/.SSH/**"}, Options{}, "/users/u/.ssh/config", "", ""},
		{"anchored", []string{"src/**"}, Options{Anchored: true}, "/w/src/a.go", "/w", "src/**"},
		{"anchored, elsewhere", []string{"src/**"}, Options{Anchored: true}, "/w/lib/src/a.go", "/w", ""},
		{"anchored, outside", []string{"src/**"}, Options{Anchored: true}, "/v/src/a.go", "/w", ""},
		{"anchored, no anchor", []string{"src/**"}, Options{Anchored: true}, "/w/src/a.go", "", ""},
		{"anchored, absolute", []string{"/tmp/**"}, Options{Anchored: true}, "/tmp/x", "/w", "/tmp/**"},
		{"anchored, root anchor", []string{"w/*.go"}, Options{Anchored: true}, "/w/a.go", "/", "w/*.go"},
		{"relative path matches nothing", []string{"**"}, Options{}, "w/a", "", ""},
		{"empty path matches nothing", []string{"**"}, Options{}, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile(tc.list, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := s.Match(tc.p, tc.anchor)
			if ok != (tc.want != "") || got != tc.want {
				t.Fatalf("Match(%q, %q) = %q, %v; want %q", tc.p, tc.anchor, got, ok, tc.want)
			}
		})
	}
	var zero Set
	if _, ok := zero.Match("/a", ""); ok {
		t.Fatal("the zero Set matched")
	}
	var nilSet *Set
	if _, ok := nilSet.Match("/a", ""); ok {
		t.Fatal("a nil Set matched")
	}
}

func TestCompileRefuses(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		o       Options
		want    string
	}{
		{"", Options{}, "empty pattern"},
		{"!", Options{}, "empty pattern"},
		{"~/.ssh", Options{}, "home directory unknown"},
		{"a//b", Options{}, "empty segment"},
		{"//**", Options{}, "empty segment"}, // the fuzzer's: Path never took it
		{"/etc/", Options{}, "empty segment"},
		{".ssh/", Options{}, "empty segment"},
		{"~/", Options{Home: "/home/u"}, "empty segment"},
		{"!/tmp//x", Options{}, "empty segment"},
		{"a/[b", Options{}, "malformed segment"},
		{"x\\", Options{}, "malformed segment"},
	} {
		_, err := Compile([]string{tc.pattern}, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%q) = %v, want %q", tc.pattern, err, tc.want)
		}
	}
	for _, p := range []string{"*.pem", "/etc/**", "~/.ssh/**", "!.env.example", "a/**/b"} {
		if err := Check(p); err != nil {
			t.Errorf("Check(%q) = %v", p, err)
		}
	}
}

func TestAnchors(t *testing.T) {
	s, err := Compile([]string{"/home/u/.ssh/**", "~/.aws/credentials", "*.pem", "/etc/*.key", "/*/x", "!/home/u/.ssh/config"},
		Options{Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/home/u/.ssh", "/home/u/.aws/credentials", "/etc"}
	if got := s.Anchors(); !slices.Equal(got, want) {
		t.Fatalf("Anchors() = %q, want %q", got, want)
	}
	a, _ := Compile([]string{"src/**"}, Options{Anchored: true})
	if got := a.Anchors(); len(got) != 0 {
		t.Fatalf("an anchored relative pattern has anchors %q", got)
	}
}

// slowMatch is Set.Match without the fast paths: every pattern matched
// segment by segment.
func slowMatch(s *Set, p, anchor string) (string, bool) {
	if !strings.HasPrefix(p, "/") {
		return "", false
	}
	if s.fold {
		p, anchor = strings.ToLower(p), strings.ToLower(anchor)
	}
	hit := func(pt *pattern) bool {
		if pt.rel {
			return anchor != "" && within(p, anchor) && matchSegs(pt.segs, splitPath(p)[len(splitPath(anchor)):])
		}
		return matchSegs(pt.segs, splitPath(p))
	}
	for i := range s.include {
		if hit(&s.include[i]) {
			for j := range s.exclude {
				if hit(&s.exclude[j]) {
					return "", false
				}
			}
			return s.include[i].src, true
		}
	}
	return "", false
}

// FuzzGlob holds the engine to its slow reading and to path.Match: the
// fast paths of a Set (last segment, literal prefix, needles) agree with
// matching every segment; an absolute pattern means the same in a Set and
// in Path; Name is path.Match, and so is Path on a plain name; a folded
// Set ignores case; Check and Compile agree; nothing panics.
func FuzzGlob(f *testing.F) {
	for _, s := range [][3]string{
		{"*.pem", "/w/k.pem", ""},
		{"**/*", "/a", ""},
		{"id_rsa*", "/h/.ssh/id_rsa", ""},
		{"/etc/**", "/etc", ""},
		{"/etc/**/x", "/etc/a/x", ""},
		{".git/hooks/**", "/w/.git/hooks/a", ""},
		{"src/**", "/w/src/a", "/w"},
		{"~/.ssh/**", "/home/u/.ssh/k", ""},
		{"!x", "/x", ""},
		{"[a]", "/[a]", ""},
		{"k\\*y", "/k*y", ""},
		{"/", "/", "/"},
		{"/A/**", "/a/b", "/"},
		{"É*", "/é", ""},
		{"/etc[^a]passwd", "/etc/passwd", ""},
		{"//**", "/0", ""}, // issue 27: a Set matched, Path did not
		{"mcp__s__*", "mcp__s__d/t", ""},
		{"a[!-0]*", "a/b", ""},
		{"**/**/**/**/**/**/**/**/**/**/**/**/x", "/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/y", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, pattern, p, anchor string) {
		if name, ok := flat(pattern, p); ok {
			if m, err := path.Match(pattern, name); Name(pattern, p) != (err == nil && m) {
				t.Fatalf("Name(%q, %q) disagrees with path.Match", pattern, p)
			}
		}
		if !strings.ContainsAny(pattern, "/[\\") && !strings.ContainsAny(p, "/") && Path(pattern, p) != Name(pattern, p) {
			t.Fatalf("Path(%q, %q) on a name is not Name", pattern, p)
		}
		// A canonical absolute path and anchor, as Match takes them.
		p = path.Clean("/" + p)
		anchor = path.Clean("/" + anchor)
		list := strings.Split(pattern, ",")
		for _, fold := range []bool{false, true} {
			for _, anchored := range []bool{false, true} {
				s, err := Compile(list, Options{Home: "/home/u", Fold: fold, Anchored: anchored})
				if err != nil {
					// One meaning: an absolute pattern a Set refuses
					// matches nothing in Path either.
					if one := list[0]; len(list) == 1 && strings.HasPrefix(one, "/") && Path(one, p) {
						t.Fatalf("Compile refuses %q (%v), Path matches it on %q", one, err, p)
					}
					continue
				}
				for _, src := range list {
					if err := Check(src); err != nil {
						t.Fatalf("Compile took %q, Check refuses it: %v", src, err)
					}
				}
				got, ok := s.Match(p, anchor)
				want, wok := slowMatch(&s, p, anchor)
				if got != want || ok != wok {
					t.Fatalf("list %q fold %v anchored %v: Match(%q, %q) = %q, %v; segment by segment %q, %v",
						list, fold, anchored, p, anchor, got, ok, want, wok)
				}
				// CEL's glob() on an absolute path answers as the file
				// rules' absolute pattern does.
				if one := list[0]; !fold && len(list) == 1 && strings.HasPrefix(one, "/") && ok != Path(one, p) {
					t.Fatalf("pattern %q on %q: Set says %v, Path says %v", one, p, ok, Path(one, p))
				}
				if fold {
					if g2, ok2 := s.Match(strings.ToUpper(p), strings.ToUpper(anchor)); ok2 != ok || g2 != got {
						t.Fatalf("list %q folded: Match(%q) = %v, upper case %v", list, p, ok, ok2)
					}
				}
			}
		}
	})
}

// flat is what path.Match must be given to read name as Name does, with
// "/" an ordinary character: name with each "/" as a byte neither holds.
// It is false where a class or a "/" of the pattern could tell the two
// apart, or no byte is free; TestName holds those cases.
func flat(pattern, name string) (string, bool) {
	if !strings.Contains(name, "/") {
		return name, true
	}
	if strings.ContainsAny(pattern, "[/") {
		return "", false
	}
	for b := byte(1); b < 0x80; b++ {
		if c := string(rune(b)); b != '/' && !strings.Contains(pattern, c) && !strings.Contains(name, c) && !strings.ContainsAny(c, Meta) {
			return strings.ReplaceAll(name, "/", c), true
		}
	}
	return "", false
}
