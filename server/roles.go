package server

import (
	"fmt"
	"net/http"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

// A Role is what a token may do. The actor says who a call acts as; the
// role says which endpoints the token opens, so that a token the guarded
// agent can read (its hook's) answers nothing for a person.
type Role string

// The roles. A token made before tokens had roles reads RoleLegacy, and
// may do what RolePerson's opposite, the hook's token, may: decide and
// observe, nothing else. Old tokens were handed to agents (the service's
// docs once said to export a user's token for the hook), so the safe
// reading is the least one.
const (
	// RolePerson is a person's: answer questions, sign in to the page
	// (and so give input), read runs and the log, decide the person's own
	// calls. Its actor is a user. It is refused at the hook endpoints: a
	// person's token is never the hook's.
	RolePerson Role = "person"
	// RoleAgent is a hook's, bound to the agent it guards: decide, observe
	// and start runs for that agent's calls; never answer, sign in, give
	// input or read any run. Its actor is an agent.
	RoleAgent Role = "agent"
	// RoleService is a runtime's: decide, observe, suspend and resume for
	// its runs, read the log; never answer or sign in. Its actor is a
	// service, a schedule or the agent it runs.
	RoleService Role = "service"
	// RoleLegacy is a token stored before roles: RoleAgent's rights.
	RoleLegacy Role = ""
)

// Roles lists the roles a token is made with, as veto token create takes
// them.
var Roles = []Role{RolePerson, RoleAgent, RoleService}

// ParseRole reads a role's name.
func ParseRole(s string) (Role, error) {
	for _, r := range Roles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("role %q is not one of person, agent, service", s)
}

// DefaultRole is the role a token for actor gets when none is named: a
// user's is a person's, an agent's the hook's, any other a service's.
func DefaultRole(actor veto.Actor) Role {
	switch actor.Kind {
	case "user":
		return RolePerson
	case "agent":
		return RoleAgent
	}
	return RoleService
}

// CheckRole refuses a role the actor cannot hold: only a user is a
// person, and every user's token is a person's (a service acting as
// user:… would record its calls as the person's); the hook's token acts
// as an agent.
func CheckRole(role Role, actor veto.Actor) error {
	switch role {
	case RolePerson:
		if actor.Kind != "user" {
			return fmt.Errorf("a person's token acts as user:…, not %s:…", actor.Kind)
		}
	case RoleAgent:
		if actor.Kind != "agent" {
			return fmt.Errorf("an agent's (a hook's) token acts as agent:…, not %s:…", actor.Kind)
		}
	case RoleService:
		if actor.Kind == "user" {
			return fmt.Errorf("a service's token does not act as a person (user:…); make it act as service:…, schedule:… or agent:…")
		}
	default:
		return fmt.Errorf("role %q is not one of person, agent, service", role)
	}
	return nil
}

// Shown is the role as veto token list prints it.
func (r Role) Shown() string {
	if r == RoleLegacy {
		return "legacy"
	}
	return string(r)
}

// rights are what a route allows, by role.
type rights uint8

const (
	forPerson rights = 1 << iota
	forAgent
	forService
)

// allows reports whether a token of role r may use a route of rights.
func (g rights) allows(r Role) bool {
	switch r {
	case RolePerson:
		return g&forPerson != 0
	case RoleAgent, RoleLegacy:
		return g&forAgent != 0
	case RoleService:
		return g&forService != 0
	}
	return false
}

// reader is who reads runs through a request: every run (a person's
// token, whose actor is always a user: CheckRole; or no token, with
// authentication off), or only what names its own actor (a service's).
// An agent's token reads no run at all: the routes refuse it.
type reader struct {
	all   bool
	actor veto.Actor
}

// readerOf is the request's reader.
func readerOf(r *http.Request) reader {
	a, ok := actorOf(r)
	return reader{all: !ok || a.Kind == "user", actor: a}
}

// sees reports whether the reader may read event e: one that names its
// actor as the one who acted (a decision, an observation, a suspension)
// or as the one a person answered (a grant or refusal of its question).
func (rd reader) sees(e *veto.Event) bool {
	return rd.all || rd.is(e.Actor) || rd.is(e.For)
}

// reads reports whether the reader may read a run of stored events:
// every run, or one with an event naming its actor.
func (rd reader) reads(stored [][]byte) bool {
	if rd.all {
		return true
	}
	for _, b := range stored {
		if e, err := eventlog.DecodeEvent(b); err == nil && rd.sees(&e) {
			return true
		}
	}
	return false
}

// is reports whether a names the reader's actor (kind and id; the
// sub-agent is the call's, not the token's).
func (rd reader) is(a veto.Actor) bool {
	return a.Kind == rd.actor.Kind && a.ID == rd.actor.ID
}

// Reason codes of a token used beyond its role.
const (
	// ReasonPersonRequired refuses an answer, a sign-in or an input made
	// with a token that is not a person's.
	ReasonPersonRequired = "person_required"
	// ReasonRoleRefused refuses any other endpoint a token's role does not
	// open.
	ReasonRoleRefused = "role_refused"
)

// ReasonHeader carries the reason code of a refusal the page answers in
// HTML (a sign-in, a form), where the body is for a person to read.
const ReasonHeader = "X-Veto-Reason"

// roleRefusal is the reason and the sentence of a token of role refused a
// route of rights.
func roleRefusal(g rights, r Role) (reason, msg string) {
	if g == forPerson {
		return ReasonPersonRequired, "Only a person's token (veto token create --role person) answers a call's question; this token's role is " + r.Shown() + "."
	}
	if r == RolePerson {
		return ReasonRoleRefused, "A person's token is not a hook's: give the hook an agent's token (veto init CLIENT --url makes one), never a person's."
	}
	return ReasonRoleRefused, "This token's role (" + r.Shown() + ") does not open this endpoint; see docs/serve.md, Who is acting."
}
