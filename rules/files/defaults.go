package files

import (
	_ "embed"
	"strings"
)

// DefaultProtected are the locations inside the write roots that file
// tools must not write: git's internals, veto's own state, and the client
// settings that could switch veto off. They match at any depth below a
// root.
var DefaultProtected = []string{
	".git/**",
	".veto/**",
	".claude/settings*.json",
	".gemini/settings.json",
	".cursor/hooks.json",
	".codex/**",
	".github/hooks/**",
}

// DefaultPersistence are the files that make something run later on its
// own: shell start-up files, ssh's, cron's, systemd's, launchd's and XDG
// autostart's, git hooks and the user's git configuration.
var DefaultPersistence = []string{
	"~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile",
	"~/.zshrc", "~/.zshenv", "~/.zprofile", "~/.zlogin", "~/.zlogout",
	"~/.config/fish/**", "~/.xprofile", "~/.xsessionrc", "~/.pam_environment",
	"/etc/profile", "/etc/profile.d/**", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zsh/**", "/etc/environment",
	"~/.ssh/authorized_keys", "~/.ssh/authorized_keys2", "~/.ssh/config", "~/.ssh/rc", "/etc/ssh/**",
	"/etc/cron*", "/etc/cron*/**", "/etc/anacrontab", "/var/spool/cron/**",
	"~/.config/systemd/**", "/etc/systemd/**", "/lib/systemd/**", "/usr/lib/systemd/**",
	"~/Library/LaunchAgents/**", "/Library/LaunchAgents/**", "/Library/LaunchDaemons/**",
	"~/.config/autostart/**", "/etc/xdg/autostart/**",
	".git/hooks/**",
	"~/.gitconfig", "~/.config/git/config",
}

// DefaultCredentials are the files that hold secrets. Reading or writing
// one is denied; a credential directory covers everything in it. The list
// is data: credentials.txt, one pattern a line with whose file it is.
var DefaultCredentials = parseCredentials(credentialsTxt)

//go:embed credentials.txt
var credentialsTxt string

// parseCredentials reads credentials.txt: a pattern a line, what follows
// " #" a comment, lines that start with "#" and blank ones skipped. A
// malformed pattern panics: the list is built in, and a test compiles it.
func parseCredentials(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if err := CheckPattern(line); err != nil {
			panic("rules/files/credentials.txt: " + line + ": " + err.Error())
		}
		out = append(out, line)
	}
	return out
}
