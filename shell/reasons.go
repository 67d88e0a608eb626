package shell

// The rules that report the analyzer's findings, and the reasons they
// give. Every Finding the package makes uses these; Reasons lists them for
// the documentation and the gate.

// Rule is the id of the veto rule that reports a finding.
type Rule string

// Rule ids of findings.
const (
	// RuleAnalyzer reports destructive operations and what the analyzer
	// cannot vouch for.
	RuleAnalyzer Rule = "shell.analyzer"
	// RuleEnvDump reports a command that prints the environment.
	RuleEnvDump Rule = "shell.env_dump"
	// RulePrivilege reports a command that gains root or another user's
	// rights, or leaves the sandbox.
	RulePrivilege Rule = "shell.privilege"
	// RuleInjection reports a variable that makes the dynamic loader, git,
	// a shell or an interpreter load or run code at start-up.
	RuleInjection Rule = "shell.injection"
)

// Reason is why a finding was made: the reason code of the denial.
type Reason string

// Reason codes of findings.
const (
	// GitDestructive is given for git operations that throw away work:
	// checkout of paths or --force, switch --discard-changes, restore of
	// the worktree, reset --hard or --merge, clean -f, push --force,
	// +refspec, :ref, --mirror or --delete, branch -D, stash drop or clear,
	// worktree remove --force.
	GitDestructive Reason = "git_destructive"
	// RmRecursiveForce is given for rm -r -f of a target veto cannot
	// determine (a substitution, xargs or parallel input, find -exec {}),
	// and for any rm -rf in input that only parsed after recovery or runs
	// remotely.
	RmRecursiveForce Reason = "rm_recursive_force"
	// FindDelete is given for find … -delete.
	FindDelete Reason = "find_delete"
	// DiskDestroy is given for dd of= a disk device, and for mkfs*,
	// mke2fs, mkswap, wipefs, shred, fdisk, sfdisk, parted, blkdiscard.
	DiskDestroy Reason = "disk_destroy"
	// RecursiveRootChange is given for chmod, chown or chgrp -R of / or
	// the home directory.
	RecursiveRootChange Reason = "recursive_root_change"
	// CrontabRemove is given for crontab -r.
	CrontabRemove Reason = "crontab_remove"
	// FetchToShell is given when what a download (curl, wget, nc, ssh, …)
	// fetches is run: piped into a shell or interpreter, given to one as
	// <(…), or saved to a file (curl -o, wget -O, > f) that the same
	// command then runs.
	FetchToShell Reason = "fetch_to_shell"
	// DecodeToShell is given when what base64 -d, xxd -r, openssl -d,
	// uudecode, printf with escapes or directives beyond %s, or echo -e
	// decodes is piped into a shell.
	DecodeToShell Reason = "decode_to_shell"
	// ArchiveAnywhere is given for an archive extracted with its members'
	// absolute names or parent paths kept (tar -P/--absolute-names, cpio
	// -i without --no-absolute-filenames, unzip -:, 7z -spf): its files
	// may land anywhere, start-up files and git hooks included.
	ArchiveAnywhere Reason = "archive_anywhere"
	// CannotVouch is given when the program is an expansion veto cannot
	// know or split, when a script, file or code handed to a shell,
	// source, eval, an interpreter or git cannot be seen (a variable, an
	// expansion, input from a producer veto cannot read, a process
	// substitution of an unknown command, a file the same command wrote
	// with content veto cannot know), when an alias or a name reference
	// veto cannot read is used, and for constructs the analyzer does not
	// follow.
	CannotVouch Reason = "cannot_vouch"
	// ParseFailed is given for a command that does not parse, even after
	// the unterminated-quote recovery.
	ParseFailed Reason = "parse_failed"
	// DepthExceeded is given for a command that nests shells, evals,
	// wrappers or functions deeper than Env.MaxDepth.
	DepthExceeded Reason = "depth_exceeded"
	// EnvDump is given (by RuleEnvDump) for env, printenv, set, export,
	// export -p, declare -x, compgen -v with nothing else to do, printenv
	// of a name shaped like a secret's, reading /proc/*/environ (a part
	// unknown too), and interpreter code that reads the whole
	// environment.
	EnvDump Reason = "env_dump"
	// SecretPrint is given (by RuleEnvDump) for a variable named like a
	// secret's (shell/secrets.go's secretName) expanded where the command
	// prints it (echo, printf, a here-document into cat, … | base64, a
	// file) or sends it to a host that is neither this machine nor the
	// secret's own service, declare -p of one, and a program run the way
	// that prints a secret (gh auth token, aws configure get of a key,
	// gcloud auth print-access-token, kubectl config view --raw, git
	// credential fill, gpg --export-secret-keys, …: secretPrinters).
	SecretPrint Reason = "secret_print"
	// PrivilegeEscalation is given (by RulePrivilege) for sudo, sudoedit,
	// doas, pkexec, run0, su, runuser, sg, newgrp and ksu (but their help,
	// their version, sudo -l, -k and -K), setpriv changing its user, group
	// or adding capabilities, capsh changing its user, group or
	// capabilities, setcap adding capabilities, chmod or install setting
	// the setuid bit, machinectl shell, systemd-run without --user, and
	// usermod, gpasswd, useradd, visudo and kin.
	PrivilegeEscalation Reason = "privilege_escalation"
	// SandboxEscape is given (by RulePrivilege) for a container run with
	// --privileged, a host path (/, home, a system directory) or the
	// runtime's socket mounted, the host's pid, ipc, uts, user or cgroup
	// namespace, a capability beyond the default ones, a disk or memory
	// device or its security profile off; kubectl debug of a node or a
	// privileged pod; nsenter; chroot; unshare -r; podman unshare;
	// pivot_root; mount of anything; curl, socat or nc talking to a
	// container runtime's socket; a path through /proc/N/root or cwd; and
	// insmod, modprobe, kexec, setenforce 0, aa-disable.
	SandboxEscape Reason = "sandbox_escape"
	// LoaderInjection is given (by RuleInjection) for LD_PRELOAD, LD_AUDIT
	// or DYLD_INSERT_LIBRARIES set to anything but the system's library
	// directories, and for the loader run with --preload or --audit.
	LoaderInjection Reason = "loader_injection"
	// GitConfigInjection is given (by RuleInjection) for git configuration
	// given through the environment (GIT_CONFIG_COUNT and its
	// GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n, GIT_CONFIG_PARAMETERS) with a
	// key that runs code veto cannot see or that names hooks, includes or
	// helpers; GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM or GIT_CONFIG naming a
	// file; GIT_EXEC_PATH or GIT_TEMPLATE_DIR outside the system's git;
	// and a program variable (GIT_SSH_COMMAND, GIT_EDITOR, GIT_PAGER, …)
	// veto cannot see. The programs those variables name are judged as
	// the commands they are.
	GitConfigInjection Reason = "git_config_injection"
	// StartupInjection is given (by RuleInjection) for BASH_ENV, ENV naming
	// a path, NODE_OPTIONS loading a module (--require, --import,
	// --loader), PERL5OPT loading a module, RUBYOPT requiring a file and
	// JAVA_TOOL_OPTIONS, _JAVA_OPTIONS or JDK_JAVA_OPTIONS with an agent,
	// or any of them, LESSOPEN, LESSCLOSE, PS4 or BASH_FUNC_* set to a
	// value veto cannot see (a value it can see is analysed).
	StartupInjection Reason = "startup_injection"
)

// ReasonInfo is one reason code the analyzer can give: the rule that
// reports it, and what it means in one line.
type ReasonInfo struct {
	Rule    Rule
	Reason  Reason
	Meaning string
}

// reasons is every reason code, in the order of docs/shell.md.
var reasons = []ReasonInfo{
	{RuleAnalyzer, GitDestructive, "a git operation that throws away work"},
	{RuleAnalyzer, RmRecursiveForce, "a recursive forced removal of something veto cannot determine"},
	{RuleAnalyzer, FindDelete, "find deletes what it matches"},
	{RuleAnalyzer, DiskDestroy, "data on a disk destroyed beyond recovery"},
	{RuleAnalyzer, RecursiveRootChange, "the mode or owner of everything below / or home changed"},
	{RuleAnalyzer, CrontabRemove, "the user's crontab removed"},
	{RuleAnalyzer, FetchToShell, "what a download fetches is run"},
	{RuleAnalyzer, DecodeToShell, "what a decoder decodes is run"},
	{RuleAnalyzer, ArchiveAnywhere, "an archive extracted with its absolute or parent paths kept"},
	{RuleAnalyzer, CannotVouch, "something the command runs cannot be seen statically"},
	{RuleAnalyzer, ParseFailed, "the command does not parse"},
	{RuleAnalyzer, DepthExceeded, "the command nests deeper than veto follows"},
	{RuleEnvDump, EnvDump, "the command prints the environment"},
	{RuleEnvDump, SecretPrint, "the command prints or sends a secret: a secret-named variable's value, or a program's token or key"},
	{RulePrivilege, PrivilegeEscalation, "the command gains root's or another user's rights"},
	{RulePrivilege, SandboxEscape, "the command leaves the sandbox for the host"},
	{RuleInjection, LoaderInjection, "the dynamic loader is made to load a library into a program"},
	{RuleInjection, GitConfigInjection, "git is configured through the environment to run a program veto cannot vouch for"},
	{RuleInjection, StartupInjection, "a shell or an interpreter is made to load code when it starts"},
}

// Reasons returns every reason code a Finding can carry, with its rule and
// its meaning. The slice is the caller's.
func Reasons() []ReasonInfo { return append([]ReasonInfo(nil), reasons...) }
