package server

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/claudecode"
	"github.com/vetohq/veto/sqlstore"
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

// hookDeny writes Claude Code's blocking reply to a PreToolUse.
func (s *Server) hookDeny(w http.ResponseWriter, reason string) {
	writeJSON(w, http.StatusOK, map[string]hookOutput{"hookSpecificOutput": {
		HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: agent.Clip(reason)}})
}

func (s *Server) claudeHook(w http.ResponseWriter, r *http.Request) {
	b, err := readBody(w, r, agent.MaxEvent)
	if err != nil {
		s.hookDeny(w, "veto could not read the hook event, so the call is blocked.")
		return
	}
	a := claudecode.Adapter{ProjectDir: r.Header.Get(ProjectDirHeader)}
	ev, err := a.Decode(b)
	if err != nil {
		s.hookDeny(w, "veto could not read the hook event ("+err.Error()+"), so the call is blocked.")
		return
	}
	if ev.Kind == agent.Ignore {
		writeJSON(w, http.StatusOK, struct{}{})
		return
	}
	if act, ok := actorOf(r); ok {
		ev.Call.Actor.Kind, ev.Call.Actor.ID = act.Kind, act.ID
	}
	refuse := func(msg string) {
		if ev.Kind == agent.Decide {
			s.hookDeny(w, msg)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"systemMessage": msg})
	}
	s.withState(w, r, refuse, func(ctx context.Context) {
		ctx, causes := sqlstore.WithCauses(ctx)
		switch ev.Kind {
		case agent.Start:
			if err := s.cfg.Gate.Start(ctx, veto.Run{Ref: ev.Session, Fresh: ev.Fresh}); err != nil {
				s.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "veto serve: session start not recorded", slog.String("run", ev.Session))
				refuse("veto could not record the session's start.")
				return
			}
		case agent.Decide:
			v := s.decideCall(ctx, &ev.Call)
			if !v.Allowed {
				s.hookDeny(w, claudecode.Reason(v))
				return
			}
		case agent.Observe:
			unlock, ok := s.runs.lock(ctx, ev.Call.Run.Ref)
			if !ok {
				refuse("veto could not record what the call did within its deadline.")
				return
			}
			defer unlock()
			if err := s.cfg.Gate.ObserveCall(ctx, &ev.Call, ev.Outcome); err != nil {
				msg := "veto could not record what the call did."
				if se := causes.Last(); se != nil {
					msg = withCause(msg, se.Reason())
				}
				refuse(msg)
				return
			}
		}
		writeJSON(w, http.StatusOK, struct{}{})
	})
}
