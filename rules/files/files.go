// Package files holds the rules that guard every tool that touches files:
// where it may write (write roots, protected locations, persistence
// targets), what it may never read or write (credentials), and what the
// run must know before it overwrites (stale, read before write), plus the
// manifest, write scope and reference checks. Every path goes through
// toolpath; no rule resolves a path itself.
//
// Writes are an inclusion list: the parameters a descriptor marks as
// written. Every other path is read, by exclusion; a tool without a
// descriptor has its path-like arguments sniffed, and each is judged as a
// path it might write.
package files

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/toolpath"
)

// Config sets the file rules' parameters. The zero value is the default.
type Config struct {
	// Egress is the egress allow-list file.package_config judges a
	// registry in a package manager's config file by (in every mode).
	Egress egress.Policy
	// Home is the user's home directory; empty means $HOME.
	Home string
	// TempDirs are write roots besides the workspace; nil means $TMPDIR,
	// /tmp and /var/tmp.
	TempDirs []string
	// ExtraRoots are further write roots ("~" allowed).
	ExtraRoots []string
	// Protected, Persistence and Credentials replace the default pattern
	// lists when not nil.
	Protected, Persistence, Credentials []string
	// TaskFiles replaces the default editor task files when not nil.
	TaskFiles []string
	// Manifest, when not nil, lists the only files a call may write
	// (relative to the workspace, or absolute, or "~/…").
	Manifest []string
	// WriteScope, when not nil, is the patterns written paths must match.
	WriteScope []string
	// WriteScopes are further scopes: a written path must match each.
	WriteScopes [][]string
	// FoldCase compares paths without case, for filesystems that ignore it.
	// The default follows the operating system (macOS and Windows fold).
	FoldCase *bool
	// FS and LookupHome are what paths are resolved with; nil means the
	// live filesystem and user database.
	FS         toolpath.FS
	LookupHome func(name string) (string, error)
	// Extractors find paths the descriptor roles cannot name, such as the
	// files a shell command reads and writes.
	Extractors []veto.PathExtractor
	// Now is the clock of the caches (a workspace's place, a git config's
	// hooks paths, each reused for a second); nil means time.Now.
	Now func() time.Time
}

// Set is the file rules, compiled from a Config.
type Set struct {
	egress      egress.Policy
	home        string
	homes       []string // the home directory's real forms: removing or moving it away is refused wherever the roots are
	gitConfig   string   // the user's git configuration, ~/.gitconfig; empty without a home
	tempRoots   []string
	extraRoots  []string
	protected   patterns
	persistence patterns
	credentials patterns
	tasks       patterns
	credAnchors []string
	credFillers []string        // what an unknown part of a read path is tried as
	credList    []string        // the credential patterns as written, for fillersFor
	manifest    map[string]bool // absolute entries; relative ones are joined to the workspace per call
	manifestRel []string
	scopes      []patterns
	fold        bool
	fs          toolpath.FS
	lookupHome  func(string) (string, error)
	extractors  []veto.PathExtractor

	// workspaces caches where each working directory's workspace is, for a
	// second: a long-running process asks for the same few thousands of
	// times a minute. A stale answer can only be a root the directory had
	// a moment ago.
	wsMu       sync.Mutex
	workspaces map[[2]string]wsEntry
	now        func() time.Time
}

type wsEntry struct {
	dir string
	err error
	at  time.Time
}

// cacheTTL is how long a workspace or a git config's hooks paths are
// reused before the filesystem is asked again.
const cacheTTL = time.Second

func (s *Set) workspace(reported string, env toolpath.Env) (string, error) {
	key := [2]string{reported, env.Cwd}
	now := s.now()
	s.wsMu.Lock()
	e, ok := s.workspaces[key]
	s.wsMu.Unlock()
	if ok && now.Sub(e.at) < cacheTTL && now.Sub(e.at) >= 0 {
		return e.dir, e.err
	}
	dir, err := toolpath.Workspace(reported, env)
	s.wsMu.Lock()
	if len(s.workspaces) > 4096 {
		clear(s.workspaces)
	}
	s.workspaces[key] = wsEntry{dir, err, now}
	s.wsMu.Unlock()
	return dir, err
}

// New compiles cfg. A malformed pattern or an unresolvable root is an
// error naming it.
func New(cfg Config) (*Set, error) {
	s := &Set{egress: cfg.Egress, home: cfg.Home, fs: cfg.FS, lookupHome: cfg.LookupHome, workspaces: map[[2]string]wsEntry{}, now: time.Now,
		extractors: cfg.Extractors}
	if s.home == "" {
		s.home, _ = os.UserHomeDir()
	}
	if s.home != "" {
		s.gitConfig = path.Join(s.home, ".gitconfig")
	}
	if s.fs == nil {
		s.fs = toolpath.OS{}
	}
	if cfg.Now != nil {
		s.now = cfg.Now
	}
	if s.lookupHome == nil {
		s.lookupHome = toolpath.LiveEnv("/").LookupHome
	}
	s.fold = runtime.GOOS == "darwin" || runtime.GOOS == "windows"
	if cfg.FoldCase != nil {
		s.fold = *cfg.FoldCase
	}
	env := s.env("/")
	if s.home != "" {
		if p, err := toolpath.Resolve(s.home, env); err == nil {
			s.homes = p.Forms()
		} else if path.IsAbs(s.home) {
			s.homes = []string{path.Clean(s.home)}
		}
	}
	temps := cfg.TempDirs
	if temps == nil {
		temps = []string{"/tmp", "/var/tmp"}
		if t := os.Getenv("TMPDIR"); t != "" {
			temps = append([]string{t}, temps...)
		}
	}
	var err error
	if s.tempRoots, err = resolveRoots(temps, env); err != nil {
		return nil, err
	}
	if s.extraRoots, err = resolveRoots(cfg.ExtraRoots, env); err != nil {
		return nil, err
	}
	for _, l := range []struct {
		name string
		list []string
		def  []string
		out  *patterns
	}{
		{"protected", cfg.Protected, DefaultProtected, &s.protected},
		{"persistence", cfg.Persistence, DefaultPersistence, &s.persistence},
		{"credentials", cfg.Credentials, DefaultCredentials, &s.credentials},
		{"task files", cfg.TaskFiles, DefaultTaskFiles, &s.tasks},
	} {
		list := l.list
		if list == nil {
			list = l.def
		}
		if *l.out, err = compilePatterns(list, s.home, s.fold, false); err != nil {
			return nil, fmt.Errorf("files: %s: %w", l.name, err)
		}
	}
	s.credAnchors = s.credentials.anchors()
	creds := cfg.Credentials
	if creds == nil {
		creds = DefaultCredentials
	}
	s.credFillers = fillers(creds, s.home)
	s.credList = creds
	if cfg.Manifest != nil {
		s.manifest = map[string]bool{}
		for _, m := range cfg.Manifest {
			if filepath.IsAbs(m) || m == "~" || len(m) > 1 && m[:2] == "~/" {
				p, err := toolpath.Resolve(m, env)
				if err != nil {
					return nil, fmt.Errorf("files: manifest entry: %w", err)
				}
				s.manifest[p.Real] = true
			} else {
				s.manifestRel = append(s.manifestRel, m)
			}
		}
	}
	scopes := cfg.WriteScopes
	if cfg.WriteScope != nil {
		scopes = append([][]string{cfg.WriteScope}, scopes...)
	}
	for _, list := range scopes {
		sc, err := compilePatterns(list, s.home, s.fold, true)
		if err != nil {
			return nil, fmt.Errorf("files: write scope: %w", err)
		}
		s.scopes = append(s.scopes, sc)
	}
	return s, nil
}

func resolveRoots(list []string, env toolpath.Env) ([]string, error) {
	var out []string
	for _, r := range list {
		if err := CheckRoot(r); err != nil {
			return nil, fmt.Errorf("files: %w", err)
		}
		p, err := toolpath.Resolve(r, env)
		if err != nil {
			return nil, fmt.Errorf("files: root: %w", err)
		}
		out = append(out, p.Real)
	}
	return out, nil
}

func (s *Set) env(cwd string) toolpath.Env {
	return toolpath.Env{Cwd: cwd, Home: s.home, LookupHome: s.lookupHome, FS: s.fs}
}

// Rules returns the file rules in the order they run: for a write, write
// roots → protected → persistence → auto-run task → credential → stale → read before
// write, then manifest, write scope and reference checks; for a read, the
// credential rule.
func (s *Set) Rules() []veto.Rule {
	rules := []veto.Rule{
		&writeRoots{s}, &protected{s}, &persistence{s: s}, &autoRunTask{s}, &packageConfig{s}, &credential{s}, &stale{s}, &readBeforeWrite{s},
	}
	if s.manifest != nil {
		rules = append(rules, &manifest{s})
	}
	if len(s.scopes) > 0 {
		rules = append(rules, &writeScope{s})
	}
	return append(rules, &referenceExists{s})
}
