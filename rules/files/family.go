package files

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/rule"
)

// The file rules' reasons, declared once. "%s" is the place the path came
// from ("The file_path argument", "The command").
var (
	pathUnknown      = &rule.Reason{Code: "path_unknown", Message: "The command writes to a path veto cannot determine (a variable, an expansion or an unknown directory), so it is refused."}
	pathUnresolvable = &rule.Reason{Code: "path_unresolvable", Message: "%s names a path veto cannot resolve, so the call is refused."}
	rootRemoval      = &rule.Reason{Code: "root_removal", Message: "The call removes or moves away the home directory, the workspace, a write root itself, or a directory holding one.",
		Advice: &veto.Advice{Instead: "Remove or move what lies below it, by name."}}
	workspaceUnknown = &rule.Reason{Code: "workspace_unknown", Message: "The call has no working directory, so veto cannot tell where it writes."}
	outsideRoots     = &rule.Reason{Code: "outside_write_roots", Message: "%s points outside the write roots (the project and the temporary directories).", Advice: &veto.Advice{Policy: "files.extra_roots in the user's veto.yaml"}}
	// sniffedOutside is outside_write_roots for a tool veto has no
	// descriptor for: the path was guessed from the argument's shape, and
	// describing the tool is what changes it. "%s" is the tool's name,
	// never an argument.
	sniffedOutside = &rule.Reason{Code: "undescribed_outside_roots", Message: "An argument of %s reads as a path outside the write roots; veto has no descriptor for the tool, so it judges every path-like argument as a file the tool may write.",
		Advice: &veto.Advice{Instead: "If the argument is not a local path, ask the user to describe the tool.",
			Policy: "tools.TOOL.params in veto.yaml, with TOOL the tool's name: say which parameters are local paths (path, source_path); the others are not judged as files"}}
	protectedPath     = &rule.Reason{Code: "protected_path", Message: "%s points into a protected location (git internals, veto's state, or the client's settings)."}
	persistenceTarget = &rule.Reason{Code: "persistence_target", Message: "%s points at a file that would run something later on its own (shell start-up, ssh, cron, services, git hooks)."}
	credentialPath    = &rule.Reason{Code: "credential_path", Message: "%s names a file that holds credentials (SSH keys, cloud or registry tokens, .env files), which agents may not read or write."}
	credentialSearch  = &rule.Reason{Code: "credential_search", Message: "%s names a directory whose tree holds credentials; name a directory below it instead, one that holds none."}
	changedSinceRead  = &rule.Reason{Code: "changed_since_read", Message: "The file changed on disk since this run last read it; read it again before writing."}
	overwriteUnread   = &rule.Reason{Code: "overwrite_unread", Message: "The file exists and this run has not read it; read it first, or edit it."}
	notInManifest     = &rule.Reason{Code: "not_in_manifest", Message: "%s names a file the write manifest does not list."}
	outsideScope      = &rule.Reason{Code: "outside_write_scope", Message: "%s names a file outside the declared write scope."}
	taskRunsOnOpen    = &rule.Reason{Code: "task_runs_on_open", Message: "%s names an editor task file and the content holds a task that runs on its own when the folder is opened (runOn folderOpen).",
		Advice: &veto.Advice{Instead: "Write the task without runOptions.runOn; the user can run it, or set it to run on open themselves.", Policy: "builtin.off: file.auto_run_task in the user's veto.yaml"}}
	taskUnseen         = &rule.Reason{Code: "task_content_unknown", Message: "%s names an editor task file and veto cannot see the content written there, so it cannot tell whether a task runs on folder open."}
	installScriptAdded = &rule.Reason{Code: "install_script", Message: "%s names a package.json and the content adds a script that package managers run on their own at install time (preinstall, install, postinstall, prepare).",
		Advice: &veto.Advice{Instead: "Add it under another script name the user runs by hand.", Policy: "builtin.off: file.package_config in the user's veto.yaml"}}
	referenceMissing = &rule.Reason{Code: "reference_missing", Message: "%s names a file that does not exist."}
)

// The file rules, in the order they run.
var (
	WriteRoots = &rule.Info{ID: "file.write_roots", Doc: "Refuses a write outside the workspace, the temporary directories and the extra roots, and removing a root.",
		Risk: veto.RiskHigh, Advice: rule.Off("file.write_roots"), Reasons: []*rule.Reason{pathUnknown, pathUnresolvable, rootRemoval, workspaceUnknown, outsideRoots, sniffedOutside}}
	Protected = &rule.Info{ID: "file.protected", Doc: "Refuses a write into a protected location inside the roots.",
		Risk: veto.RiskHigh, Advice: rule.Off("file.protected"), Reasons: []*rule.Reason{protectedPath}}
	Persistence = &rule.Info{ID: "file.persistence", Doc: "Refuses a write of a file that makes something run later on its own.",
		Risk: veto.RiskCritical, Advice: rule.Off("file.persistence"), Reasons: []*rule.Reason{persistenceTarget}}
	AutoRunTask = &rule.Info{ID: "file.auto_run_task", Doc: "Refuses writing an editor task file (files.task_files) that holds a task run when the folder is opened, or whose content veto cannot see.",
		Risk: veto.RiskCritical, Advice: rule.Off("file.auto_run_task"), Reasons: []*rule.Reason{taskRunsOnOpen, taskUnseen}}
	registryRedirect = &rule.Reason{Code: "registry_redirect", Message: "%s names a package manager's config file and the content points it at a registry or index that is neither the ecosystem's nor on the egress allow-list.",
		Advice: &veto.Advice{Instead: "Keep the ecosystem's registry, or ask the user to add the registry's host to the egress allow-list.", Policy: "egress.allow"}}
	PackageConfig = &rule.Info{ID: "file.package_config", Doc: "Refuses writing a package.json whose content adds an install-time script (preinstall, install, postinstall, prepare) the file did not hold, and a package manager's config file (.npmrc, .yarnrc, .yarnrc.yml, pip.conf, pip.ini, uv.toml, bunfig.toml) that points at a registry not allowed.",
		Risk: veto.RiskHigh, Advice: rule.Off("file.package_config"), Reasons: []*rule.Reason{installScriptAdded, registryRedirect}}
	Credential = &rule.Info{ID: "file.credential", Doc: "Refuses reading or writing a file that holds credentials, and searching a tree that holds one.",
		Risk: veto.RiskCritical, Advice: rule.Off("file.credential"), Reasons: []*rule.Reason{pathUnresolvable, credentialPath, credentialSearch}}
	Stale = &rule.Info{ID: "file.stale", Doc: "Refuses a write of a file that changed since the run read it.",
		Risk: veto.RiskMedium, Advice: rule.Off("file.stale"), Reasons: []*rule.Reason{changedSinceRead}}
	ReadBeforeWrite = &rule.Info{ID: "file.read_before_write", Doc: "Refuses overwriting an existing file the run has not read.",
		Risk: veto.RiskMedium, Advice: rule.Off("file.read_before_write"), Reasons: []*rule.Reason{overwriteUnread}}
	Manifest = &rule.Info{ID: "file.manifest", Doc: "Refuses a write of a file the manifest does not list (when files.manifest is set).",
		Risk: veto.RiskMedium, Advice: veto.Advice{Policy: "files.manifest"}, Reasons: []*rule.Reason{notInManifest}}
	WriteScope = &rule.Info{ID: "file.write_scope", Doc: "Refuses a write outside the write scope (when files.write_scope is set).",
		Risk: veto.RiskMedium, Advice: veto.Advice{Policy: "files.write_scope"}, Reasons: []*rule.Reason{outsideScope}}
	ReferenceExists = &rule.Info{ID: "file.reference_exists", Doc: "Refuses a call that names, as a file it reads, one that does not exist.",
		Risk: veto.RiskLow, Advice: rule.Off("file.reference_exists"), Reasons: []*rule.Reason{referenceMissing}}
)

// Section is the files section of a policy file.
type Section struct {
	ExtraRoots  []string `yaml:"extra_roots" doc:"Write roots besides the workspace and the temporary directories (absolute or ~/...). Only the user's file may add roots; later files can only remove them."`
	TempDirs    []string `yaml:"temp_dirs" doc:"The temporary directories that are write roots (default: $TMPDIR, /tmp, /var/tmp). Later files can only remove them."`
	Protected   []string `yaml:"protected" doc:"More locations inside the roots that may not be written (patterns)."`
	Persistence []string `yaml:"persistence" doc:"More files that make something run later (patterns)."`
	Credentials []string `yaml:"credentials" doc:"More files that hold secrets (patterns)."`
	TaskFiles   []string `yaml:"task_files" doc:"More editor task files (patterns) whose tasks may not run on folder open; the defaults are .vscode/tasks.json and *.code-workspace."`
	Manifest    []string `yaml:"manifest" doc:"The only files calls may write (relative to the workspace, absolute, or ~/...)."`
	WriteScope  []string `yaml:"write_scope" doc:"Patterns every written path must match (relative to the workspace, or absolute)."`
}

// Settings are the files section's effective settings.
type Settings struct {
	ExtraRoots  []string
	TempDirs    []string // nil: the default temporary directories
	Protected   []string // added to the defaults
	Persistence []string
	Credentials []string
	TaskFiles   []string
	Manifest    []string // nil: no manifest
	WriteScopes [][]string
}

// FilesSection is the files section.
var FilesSection = rule.NewSection("files",
	"Parameters of the file rules (write roots, protected locations, persistence targets, credentials, manifest, write scope).",
	nil, mergeFiles)

func init() {
	FilesSection.YAML = filesYAML
	FilesSection.Show = func() []string {
		return []string{
			fmt.Sprintf("files.protected: %d built-in pattern(s)", len(DefaultProtected)),
			fmt.Sprintf("files.persistence: %d built-in pattern(s)", len(DefaultPersistence)),
			fmt.Sprintf("files.credentials: %d built-in pattern(s)", len(DefaultCredentials)),
			fmt.Sprintf("files.task_files: %d built-in pattern(s)", len(DefaultTaskFiles)),
		}
	}
	rule.Register(&rule.Family{Name: "files", Order: 30,
		Rules:    []*rule.Info{WriteRoots, Protected, Persistence, AutoRunTask, PackageConfig, Credential, Stale, ReadBeforeWrite, Manifest, WriteScope, ReferenceExists},
		Sections: []*rule.Section{FilesSection}, Build: build})
}

// CheckRoot says what is wrong with a write root as written: it must be
// absolute or start with ~/.
func CheckRoot(r string) error {
	if !filepath.IsAbs(r) && r != "~" && !strings.HasPrefix(r, "~/") {
		return fmt.Errorf("root %q must be absolute or start with ~/", r)
	}
	return nil
}

func checkTempDir(r string) error {
	if !filepath.IsAbs(r) {
		return fmt.Errorf("temporary directory %q must be absolute", r)
	}
	return nil
}

func mergeFiles(eff *Settings, f *Section, l *rule.Layer) {
	eff.Protected = rule.Append(l, eff.Protected, f.Protected, "protected", CheckPattern)
	eff.Persistence = rule.Append(l, eff.Persistence, f.Persistence, "persistence", CheckPattern)
	eff.Credentials = rule.Append(l, eff.Credentials, f.Credentials, "credentials", CheckPattern)
	eff.TaskFiles = rule.Append(l, eff.TaskFiles, f.TaskFiles, "task_files", CheckPattern)
	if f.ExtraRoots != nil {
		rule.Each(l, f.ExtraRoots, "extra_roots", CheckRoot)
		eff.ExtraRoots = rule.Shorten(l, eff.ExtraRoots, cleanAll(f.ExtraRoots), func() []string { return []string{} })
		l.Note("extra_roots", strings.Join(f.ExtraRoots, ", "), "extra_roots")
	}
	if f.TempDirs != nil {
		rule.Each(l, f.TempDirs, "temp_dirs", checkTempDir)
		eff.TempDirs = rule.Shorten(l, eff.TempDirs, cleanAll(f.TempDirs), DefaultTempDirs)
		l.Note("temp_dirs", strings.Join(f.TempDirs, ", "), "temp_dirs")
	}
	if f.Manifest != nil {
		// Any file may set a manifest where none is; after that, files
		// only shorten it.
		eff.Manifest = rule.Shorten(l, eff.Manifest, cleanAll(f.Manifest), nil)
		l.Note("manifest", strings.Join(f.Manifest, ", "), "manifest")
	}
	if f.WriteScope != nil {
		rule.Each(l, f.WriteScope, "write_scope", CheckPattern)
		eff.WriteScopes = append(eff.WriteScopes, f.WriteScope)
		l.Note("write_scope", strings.Join(f.WriteScope, ", "), "write_scope")
	}
}

func cleanAll(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		if strings.HasPrefix(s, "/") {
			s = path.Clean(s)
		}
		out = append(out, s)
	}
	return out
}

// DefaultTempDirs are the temporary directories that are write roots when
// the policy names none: $TMPDIR, /tmp and /var/tmp.
func DefaultTempDirs() []string {
	out := []string{}
	if t := os.Getenv("TMPDIR"); t != "" {
		out = append(out, path.Clean(t))
	}
	return append(out, "/tmp", "/var/tmp")
}

func build(b *rule.Build) error {
	st, err := rule.Settings[Settings](b, FilesSection.Key)
	if err != nil {
		return err
	}
	temps := st.TempDirs
	if b.TempDirs != nil {
		temps = b.TempDirs
	}
	eg, err := rule.Settings[egress.Settings](b, egress.SectionKey)
	if err != nil {
		return err
	}
	ep, err := eg.Compile()
	if err != nil {
		return err
	}
	s, err := New(Config{
		Egress:      ep,
		LookupHome:  b.LookupHome,
		Home:        b.Home,
		TempDirs:    temps,
		ExtraRoots:  st.ExtraRoots,
		Protected:   append(slices.Clone(DefaultProtected), st.Protected...),
		Persistence: append(slices.Clone(DefaultPersistence), st.Persistence...),
		Credentials: append(slices.Clone(DefaultCredentials), st.Credentials...),
		TaskFiles:   append(slices.Clone(DefaultTaskFiles), st.TaskFiles...),
		Manifest:    st.Manifest,
		WriteScopes: st.WriteScopes,
		Extractors:  b.Extractors,
		Now:         b.Now,
		FS:          b.FS,
	})
	if err != nil {
		return err
	}
	b.Rules = append(b.Rules, s.Rules()...)
	b.Resolvers = append(b.Resolvers, s.Resolver())
	b.Learners = append(b.Learners, s.Learner())
	b.Reads = append(b.Reads, s.Reads)
	if b.Supervision != nil {
		b.Supervision.ReadMatters, b.Supervision.Floor = s.ReadMatters, s.Floor
	}
	return nil
}

func filesYAML() string {
	var b strings.Builder
	list := func(items []string) {
		for _, it := range items {
			fmt.Fprintf(&b, "    - %q\n", it)
		}
	}
	b.WriteString(`files:
  # Write roots: the workspace (the project directory the client reports, else the
  # git top level of the call's cwd, else the cwd) and the temporary directories.
  extra_roots: []    # more roots, absolute or ~/...; only the user's file adds them
  # temp_dirs: ["/tmp", "/var/tmp"]   # default: $TMPDIR, /tmp, /var/tmp

  # Patterns: * ? [...] within a segment, ** for any number of segments, /... absolute,
  # ~/... under the home directory, anything else at any depth; !pattern excludes.
  # Every file's lists add to these.
  protected:         # inside the roots, not writable by any tool
`)
	list(DefaultProtected)
	b.WriteString("  persistence:       # anywhere: files that make something run later\n")
	list(DefaultPersistence)
	b.WriteString("  credentials:       # anywhere: neither read nor written\n")
	list(DefaultCredentials)
	b.WriteString("  task_files:        # editor task files whose tasks may not run on folder open\n")
	list(DefaultTaskFiles)
	b.WriteString(`  # manifest: ["src/main.go"]        # the only files calls may write
  # write_scope: ["src/**", "docs/*.md"]  # patterns every written path must match
`)
	return b.String()
}
