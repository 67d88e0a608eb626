package files

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
// one is denied; a credential directory covers everything in it.
var DefaultCredentials = []string{
	"~/.ssh/**", "!~/.ssh/*.pub",
	"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
	"*.pem", "*.key", "*.p12", "*.pfx",
	".env", ".env.*", "!.env.example", "!.env.sample", "!.env.template", "!.env.dist",
	"~/.aws/**", "~/.azure/**", "~/.config/gcloud/**", "~/.kube/config", "~/.docker/config.json",
	"~/.netrc", "~/.npmrc", "~/.pypirc", "~/.git-credentials", "~/.config/gh/hosts.yml",
	"~/.gnupg/**", "~/.password-store/**",
	"/etc/shadow", "/etc/gshadow", "/proc/*/environ",
}
