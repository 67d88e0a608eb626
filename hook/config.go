package hook

import "github.com/vetohq/veto/agent"

// configReply answers a change of the client's settings mid-session: the
// adapter's judgement where it is a ConfigGuard, else no opinion. It needs
// neither the policy nor the state, so a broken one of them never lets a
// change that weakens veto's registration through, nor blocks another.
func configReply(a agent.Adapter, ev *agent.Event) agent.Reply {
	if g, ok := a.(agent.ConfigGuard); ok {
		return g.Config(ev)
	}
	return agent.Reply{}
}
