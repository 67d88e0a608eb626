package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
	"github.com/vetohq/veto/internal/loaded"
)

// Claude Code's HTTP hooks ("type": "http") POST the hook's JSON and read
// the reply's body as a command hook's stdout. A non-2xx answer, a
// timeout or a body that is not JSON lets the call run unless the hook is
// registered with "onFailure": "block"; so every failure of veto here is
// a 200 with the deny reply, and `veto init claude-code --url` registers
// the hook with onFailure block as well.

// ProjectDirHeader carries $CLAUDE_PROJECT_DIR, which an HTTP hook's body
// lacks (init registers it with allowedEnvVars).
const ProjectDirHeader = "X-Veto-Project-Dir"

type hookOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// claudeDeny is the Claude Code endpoint's answer to a failure.
func (s *Server) claudeDeny(w http.ResponseWriter, _ *http.Request, reason string) {
	s.hookDeny(w, reason)
}

// commandDeny is a command hook endpoint's answer to a failure: the
// client's blocking reply (for a name veto does not know, exit 2, which
// veto hook --url refuses before asking anyway).
func (s *Server) commandDeny(w http.ResponseWriter, r *http.Request, reason string) {
	rep := agent.Deny(&clients.ClaudeCode, reason)
	if a := agent.For(r.PathValue("client"), agent.Env{}); a != nil {
		rep = a.Deny(reason)
	}
	writeJSON(w, http.StatusOK, commandReply{Exit: rep.Exit, Stdout: rep.Stdout, Stderr: rep.Stderr})
}

// hookDeny writes Claude Code's blocking reply to a PreToolUse.
func (s *Server) hookDeny(w http.ResponseWriter, reason string) {
	writeJSON(w, http.StatusOK, map[string]hookOutput{"hookSpecificOutput": {
		HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: agent.Clip(reason)}})
}

func (s *Server) claudeHook(w http.ResponseWriter, r *http.Request) {
	a := agent.For(clients.ClaudeCode.Name, agent.Env{ProjectDir: r.Header.Get(ProjectDirHeader)})
	if a == nil {
		s.hookDeny(w, "veto serve has no Claude Code adapter linked, so the call is blocked.")
		return
	}
	s.hookEvent(w, r, a, func(rep agent.Reply, ev *agent.Event, denied string) {
		switch {
		case denied != "":
			s.hookDeny(w, denied)
		case rep.Exit != 0 && ev != nil && ev.Kind != agent.Decide:
			writeJSON(w, http.StatusOK, map[string]string{"systemMessage": strings.TrimSpace(rep.Stderr)})
		case rep.Exit == 0 && rep.Stdout != "":
			// The reply's JSON as it is (an allow for the user).
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, rep.Stdout)
		default:
			writeJSON(w, http.StatusOK, struct{}{})
		}
	})
}

// commandReply is /v1/hooks/{client}/command's answer: what the hook
// process does, as `veto hook CLIENT --url` writes it.
type commandReply struct {
	Exit   int    `json:"exit"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// commandHook answers a command hook's event, forwarded by veto hook
// --url: the reply the client's command hook gives, always 200.
func (s *Server) commandHook(w http.ResponseWriter, r *http.Request) {
	// The HTTP hook knows none of the client's variables (wire.ClientKeys):
	// a call waiting for a person is refused.
	a := agent.For(r.PathValue("client"), agent.Env{ProjectDir: r.Header.Get(ProjectDirHeader)})
	if a == nil {
		writeError(w, http.StatusNotFound, "client_unknown", "veto has no client of this name; see veto hook --help.")
		return
	}
	s.hookEvent(w, r, a, func(rep agent.Reply, _ *agent.Event, denied string) {
		if denied != "" {
			rep = a.Deny(denied)
		}
		writeJSON(w, http.StatusOK, commandReply{Exit: rep.Exit, Stdout: rep.Stdout, Stderr: rep.Stderr})
	})
}

// hookEvent decides or records one hook event of adapter a and hands
// write the reply; denied, when set, is the reason to block a call with
// (the event may not have been read).
func (s *Server) hookEvent(w http.ResponseWriter, r *http.Request, a agent.Adapter, write func(rep agent.Reply, ev *agent.Event, denied string)) {
	b, err := readBody(w, r, agent.MaxEvent)
	if err != nil {
		write(agent.Reply{}, nil, "veto could not read the hook event, so the call is blocked.")
		return
	}
	ev, err := a.Decode(b)
	if err != nil {
		write(agent.Reply{}, nil, "veto could not read the hook event ("+err.Error()+"), so the call is blocked.")
		return
	}
	if ev.Kind == agent.Ignore {
		write(agent.Reply{}, &ev, "")
		return
	}
	if act, ok := actorOf(r); ok {
		ev.Call.Actor.Kind, ev.Call.Actor.ID = act.Kind, act.ID
	}
	ev.Call.Time = time.Time{} // the server's clock
	if ev.Kind == agent.Decide || ev.Kind == agent.Observe {
		if msg := checkNames(&ev.Call); msg != "" {
			if ev.Kind == agent.Decide {
				write(agent.Reply{}, &ev, "The hook event cannot be read: "+msg+", so the call is blocked ("+reasonRequestInvalid+").")
			} else {
				write(agent.Reply{Exit: 1, Stderr: "The hook event cannot be read: " + msg + " (" + reasonRequestInvalid + ").\n"}, &ev, "")
			}
			return
		}
	}
	if ev.Kind == agent.Decide || ev.Kind == agent.Observe {
		if _, reason, msg := s.place(&ev.Call); reason != "" {
			if ev.Kind == agent.Decide {
				write(agent.Reply{}, &ev, msg+" ("+reason+")")
			} else {
				write(agent.Reply{Exit: 1, Stderr: msg + " (" + reason + ")\n"}, &ev, "")
			}
			return
		}
	}
	// failed is a broken setup's answer: a call is blocked; for the other
	// events the failure is reported without blocking (the tool ran).
	failed := func(msg string) {
		if ev.Kind == agent.Decide {
			write(agent.Reply{}, &ev, msg)
			return
		}
		write(agent.Reply{Exit: 1, Stderr: msg + "\n"}, &ev, "")
	}
	s.withState(loaded.Appends(r.Context()), failed, func(ctx context.Context) {
		switch ev.Kind {
		case agent.Start:
			if err := s.Gate().Start(ctx, veto.Run{Ref: ev.Session, Fresh: ev.Fresh}); err != nil {
				s.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "veto serve: session start not recorded", slog.String("run", ev.Session))
				failed("veto could not record the session's start.")
				return
			}
		case agent.Decide:
			v := s.decideCall(ctx, &ev.Call)
			if !v.Allowed {
				write(agent.Reply{}, &ev, agent.Reason(v))
				return
			}
			// A call a person approved is allowed for the user: the
			// client's own prompt would ask a second time.
			write(a.Allow(v.Approved()), &ev, "")
			return
		case agent.Observe:
			unlock, ok := s.runs.Lock(ctx, ev.Call.Run.Ref)
			if !ok {
				failed("veto could not record what the call did within its deadline.")
				return
			}
			defer unlock()
			if err := s.Gate().ObserveReported(ctx, &ev.Call, ev.Outcome); err != nil {
				if reason, msg := observationRefusal(err); reason != "" {
					failed(msg + " (" + reason + ")")
					return
				}
				failed(veto.Because("veto could not record what the call did", err, "."))
				return
			}
		}
		write(agent.Reply{}, &ev, "")
	})
}
