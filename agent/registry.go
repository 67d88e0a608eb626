package agent

import (
	"fmt"
	"slices"
	"sync"

	"github.com/vetohq/veto/clients"
)

// Env is what an adapter is made with for one event: what the client
// tells its hook besides the event itself.
type Env struct {
	// ProjectDir is the project the client reports outside the event
	// (Claude Code's $CLAUDE_PROJECT_DIR; an HTTP hook's header).
	ProjectDir string
	// Vars are the client's variables of wire.ClientKeys, as its hook saw
	// them; nil when unknown (an HTTP hook), and an adapter that needs one
	// answers as if it were unset.
	Vars map[string]string
}

// New makes a client's adapter for one event.
type New func(Env) Adapter

var (
	regMu    sync.Mutex
	adapters = map[string]New{} // by the client's name in the table
)

// Register declares the adapter of client c, a client of the table
// (clients.All). Each adapter package calls it at init, so that a program
// that links the package speaks its client, and nothing lists adapters by
// hand. It panics on a mistake, as registration runs at init: no client,
// a client not in the table, no constructor, or a client registered twice.
func Register(c *clients.Client, mk New) {
	if err := register(c, mk); err != nil {
		panic(err)
	}
}

func register(c *clients.Client, mk New) error {
	if c == nil || c.Name == "" {
		return fmt.Errorf("agent: register: an adapter needs a client with a name")
	}
	if clients.Lookup(c.Name) != c {
		return fmt.Errorf("agent: register: %q is not a client of the table (clients.All)", c.Name)
	}
	if mk == nil {
		return fmt.Errorf("agent: register: client %s has no constructor", c.Name)
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := adapters[c.Name]; dup {
		return fmt.Errorf("agent: register: client %s is registered twice", c.Name)
	}
	adapters[c.Name] = mk
	return nil
}

// For returns the adapter of the client named name for one event with
// env, nil when no adapter of that name is linked into this program.
func For(name string, env Env) Adapter {
	regMu.Lock()
	mk := adapters[name]
	regMu.Unlock()
	if mk == nil {
		return nil
	}
	return mk(env)
}

// Registered returns the names of the clients whose adapters are linked,
// in the table's order (clients.All).
func Registered() []string {
	regMu.Lock()
	defer regMu.Unlock()
	var names []string
	for _, c := range clients.All {
		if adapters[c.Name] != nil {
			names = append(names, c.Name)
		}
	}
	return slices.Clip(names)
}

// Guest is a client that also runs the hooks another client's settings
// register, and sends them its own payloads: Copilot CLI runs the hooks
// of a project's .claude/settings.json (docs/clients.md, "Hooks read by
// other clients"). Claims recognises the guest's payloads by their shape
// among those that reach the host's hook; New makes the adapter that
// answers them as the guest: its actor, its run, a reply it blocks on.
type Guest struct {
	Host, Client *clients.Client
	Claims       func(b []byte) bool
	New          New
}

var guests []Guest

// RegisterGuest declares a guest of a host; the guest's adapter package
// calls it at init. It panics on a mistake, as Register does.
func RegisterGuest(g Guest) {
	if g.Host == nil || g.Client == nil || g.Claims == nil || g.New == nil ||
		clients.Lookup(g.Host.Name) != g.Host || clients.Lookup(g.Client.Name) != g.Client || g.Host == g.Client {
		panic(fmt.Sprintf("agent: register guest: want two clients of the table, a Claims and a New: %+v", g))
	}
	regMu.Lock()
	defer regMu.Unlock()
	guests = append(guests, g)
}

// Guests are the guests registered, in their registration's order.
func Guests() []Guest {
	regMu.Lock()
	defer regMu.Unlock()
	return slices.Clone(guests)
}

// Hosted is an adapter whose client's hooks another client runs too: Host
// is its client.
type Hosted interface {
	Host() *clients.Client
}

// Sender is the adapter that answers event b, which reached a's hook: the
// adapter of the guest client that sent it, when one claims it (made with
// no Env: the host's variables are not the guest's); else a.
func Sender(a Adapter, b []byte) Adapter {
	h, ok := a.(Hosted)
	if !ok {
		return a
	}
	host := h.Host()
	regMu.Lock()
	gs := slices.Clone(guests)
	regMu.Unlock()
	for _, g := range gs {
		if g.Host == host && g.Claims(b) {
			return g.New(Env{})
		}
	}
	return a
}
