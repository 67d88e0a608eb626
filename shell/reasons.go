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
	{RuleAnalyzer, CannotVouch, "something the command runs cannot be seen statically"},
	{RuleAnalyzer, ParseFailed, "the command does not parse"},
	{RuleAnalyzer, DepthExceeded, "the command nests deeper than veto follows"},
	{RuleEnvDump, EnvDump, "the command prints the environment"},
}

// Reasons returns every reason code a Finding can carry, with its rule and
// its meaning. The slice is the caller's.
func Reasons() []ReasonInfo { return append([]ReasonInfo(nil), reasons...) }
