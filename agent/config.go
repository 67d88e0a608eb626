package agent

// ConfigGuard is an adapter whose client reports a change of its settings
// mid-session and lets a hook block it (Claude Code's ConfigChange): Config
// is the reply to ev, a Config event, that blocks a change weakening veto's
// own registration and has no opinion on any other.
type ConfigGuard interface {
	Config(ev *Event) Reply
}
