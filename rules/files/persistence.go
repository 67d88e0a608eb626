package files

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/toolpath"
)

// persistence denies a write to a file that makes something run later on
// its own: shell start-up files, ssh, cron, systemd, launchd, autostart,
// git hooks (including a directory named by core.hooksPath in the
// repository's or the user's git configuration), the user's git config.
type persistence struct {
	s     *Set
	mu    sync.Mutex
	hooks map[string]hooksEntry // git config file → the hooks paths it names
}

type hooksEntry struct {
	mtime   time.Time
	size    int64
	paths   []string
	checked time.Time // when the file was last looked at
}

func (r *persistence) Info() veto.RuleInfo { return Persistence.RuleInfo() }

func (r *persistence) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	var hooks []string
	if len(a.written) > 0 {
		hooks = r.hooksPaths(a)
	}
	for _, w := range a.written {
		if w.err != nil || w.unknown {
			continue
		}
		if matchAny(&r.s.persistence, w.path, "") {
			return deny(w), nil
		}
		for _, h := range hooks {
			if r.s.within(w.path, []string{h}) {
				return deny(w), nil
			}
		}
	}
	return veto.Allow(), nil
}

func deny(w pathArg) veto.Decision {
	return persistenceTarget.Deny(w.what())
}

// hooksPaths returns the directories core.hooksPath names in the
// workspace's git config and the user's, each read again only when the
// file changed.
func (r *persistence) hooksPaths(a *analysis) []string {
	var out []string
	if a.wsErr == nil {
		out = append(out, r.configHooks(under(a.workspace, ".git/config"), a.workspace)...)
	}
	if r.s.gitConfig != "" {
		out = append(out, r.configHooks(r.s.gitConfig, a.workspace)...)
	}
	return out
}

// under joins a relative name to dir, a Real path, which needs no
// cleaning.
func under(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

func (r *persistence) configHooks(file, workspace string) []string {
	now := r.s.now()
	r.mu.Lock()
	e, ok := r.hooks[file]
	r.mu.Unlock()
	if !ok || now.Sub(e.checked) >= cacheTTL || now.Sub(e.checked) < 0 {
		fi, err := r.s.fs.Lstat(file)
		switch {
		case err != nil || !fi.Mode().IsRegular():
			e = hooksEntry{}
		case !ok || !e.mtime.Equal(fi.ModTime()) || e.size != fi.Size():
			e = hooksEntry{mtime: fi.ModTime(), size: fi.Size(), paths: readHooksPaths(file)}
		}
		e.checked = now
		r.mu.Lock()
		if r.hooks == nil || len(r.hooks) > 4096 {
			r.hooks = map[string]hooksEntry{}
		}
		r.hooks[file] = e
		r.mu.Unlock()
	}
	var out []string
	env := r.s.env(workspace)
	if workspace == "" {
		env = r.s.env("/")
	}
	for _, raw := range e.paths {
		if p, err := toolpath.Resolve(raw, env); err == nil {
			out = append(out, p.Real)
		}
	}
	return out
}

// readHooksPaths reads the values of core.hooksPath from a git config
// file, as git reads them (parseGitConfig): a value ends at an unquoted ;
// or #, quotes and escapes are git's. Of a file git refuses, the values
// before the line it refuses at are kept; a file larger than maxGitConfig
// is read as far as that.
func readHooksPaths(file string) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxGitConfig))
	if err != nil {
		return nil
	}
	vars, _ := parseGitConfig(string(b))
	var out []string
	for _, v := range vars {
		if strings.EqualFold(v.section, "core") && v.subsection == "" && strings.EqualFold(v.name, "hookspath") && v.value != "" {
			out = append(out, v.value)
		}
	}
	return out
}

// maxGitConfig bounds how much of a git config file is read.
const maxGitConfig = 1 << 20
