package rule

import (
	"fmt"
	"slices"
	"sync"

	"github.com/vetohq/veto"
)

// A Family is one rule family's declaration, made once in its package's
// init with Register: the rules it can give (in the order they run), the
// policy sections that configure them, and how to build them from those
// sections. Loading, merging, building, the default policy file, its JSON
// Schema and what builtin.off may name are all derived from the families
// registered; no list of rule ids is written anywhere else.
type Family struct {
	Name     string     // the family, as "files"
	Order    int        // families' rules run in ascending Order
	Rules    []*Info    // every rule the family can give, in the order they run
	Sections []*Section // the policy sections it reads
	// Build adds the family's rules and helpers to b, from the effective
	// settings of its sections (Settings). It runs after every family of
	// a lower Order, so it can use what those added (b.Extractors, ...).
	Build func(b *Build) error
}

// Info is a built-in rule's declaration.
type Info struct {
	ID    string
	Doc   string // one sentence: what the rule refuses
	Needs veto.Needs
	Risk  veto.Risk // the risk of its denials, unless a reason says otherwise
	// Reasons are every reason code the rule can give, with its message.
	Reasons []*Reason
	// Advice is what every denial by the rule tells the agent, unless a
	// reason declares its own.
	Advice veto.Advice

	once sync.Once
	info veto.RuleInfo
}

// Reason is one reason code a rule gives, with the sentence a person
// reads. The message never holds argument text: it is written here, as a
// format whose verbs take only what the rule knows of the call's shape
// (which parameter, a count, an event's number), never its values.
type Reason struct {
	Code    string
	Message string
	Risk    veto.Risk    // zero: the rule's risk
	Advice  *veto.Advice // nil: the rule's advice
}

// Deny is the decision that denies a call for this reason; args fill the
// message's verbs.
func (r *Reason) Deny(args ...any) veto.Decision {
	if len(args) == 0 {
		return veto.Deny(r.Code, r.Message)
	}
	return veto.Deny(r.Code, fmt.Sprintf(r.Message, args...))
}

// RuleInfo is what the rule declares to the gate, made once.
func (i *Info) RuleInfo() veto.RuleInfo {
	i.once.Do(func() {
		i.info = veto.RuleInfo{ID: i.ID, Needs: i.Needs, Risk: veto.RiskMapping{Default: i.Risk},
			Advice: veto.AdviceMapping{Default: i.Advice}, FixedMessages: true}
		for _, r := range i.Reasons {
			if r.Risk != veto.RiskNone {
				if i.info.Risk.ByReason == nil {
					i.info.Risk.ByReason = map[string]veto.Risk{}
				}
				i.info.Risk.ByReason[r.Code] = r.Risk
			}
			if r.Advice != nil {
				if i.info.Advice.ByReason == nil {
					i.info.Advice.ByReason = map[string]veto.Advice{}
				}
				i.info.Advice.ByReason[r.Code] = *r.Advice
			}
		}
	})
	return i.info
}

var (
	famMu    sync.Mutex
	families []*Family
	ruleIDs  = map[string]string{} // rule id → family
	sections = map[string]string{} // section key → family
)

// Register declares a family. It panics on a mistake, as registration
// runs at init: an empty or duplicate family name, a malformed or
// duplicate rule id or reason code, a rule without reasons, a section key
// already taken, or a family without Build.
func Register(f *Family) {
	if err := register(f); err != nil {
		panic(err)
	}
}

func register(f *Family) error {
	famMu.Lock()
	defer famMu.Unlock()
	if f == nil || !veto.ValidID(f.Name) {
		return fmt.Errorf("rule: register: a family needs a name in the id format")
	}
	if f.Build == nil {
		return fmt.Errorf("rule: register: family %s has no Build", f.Name)
	}
	for _, g := range families {
		if g.Name == f.Name {
			return fmt.Errorf("rule: register: duplicate family %q", f.Name)
		}
	}
	ids := map[string]bool{}
	for _, r := range f.Rules {
		if err := checkInfo(r); err != nil {
			return fmt.Errorf("rule: register: family %s: %w", f.Name, err)
		}
		if prev, dup := ruleIDs[r.ID]; dup || ids[r.ID] {
			return fmt.Errorf("rule: register: duplicate rule id %q (family %s)", r.ID, prev)
		}
		ids[r.ID] = true
	}
	keys := map[string]bool{}
	for _, s := range f.Sections {
		if s == nil || !veto.ValidID(s.Key) || s.typ == nil {
			return fmt.Errorf("rule: register: family %s: a section needs a key and a type (NewSection)", f.Name)
		}
		if prev, dup := sections[s.Key]; dup || keys[s.Key] {
			return fmt.Errorf("rule: register: section %q is already declared (family %s)", s.Key, prev)
		}
		keys[s.Key] = true
	}
	for id := range ids {
		ruleIDs[id] = f.Name
	}
	for k := range keys {
		sections[k] = f.Name
	}
	families = append(families, f)
	slices.SortStableFunc(families, func(a, b *Family) int { return a.Order - b.Order })
	return nil
}

func checkInfo(r *Info) error {
	if r == nil || !veto.ValidID(r.ID) {
		return fmt.Errorf("malformed rule id")
	}
	if len(r.Reasons) == 0 {
		return fmt.Errorf("rule %s declares no reason codes", r.ID)
	}
	codes := map[string]bool{}
	for _, rs := range r.Reasons {
		if rs == nil || !veto.ValidID(rs.Code) {
			return fmt.Errorf("rule %s: malformed reason code", r.ID)
		}
		if codes[rs.Code] {
			return fmt.Errorf("rule %s: duplicate reason code %q", r.ID, rs.Code)
		}
		if rs.Message == "" {
			return fmt.Errorf("rule %s: reason %s has no message", r.ID, rs.Code)
		}
		if rs.Risk > veto.RiskCritical {
			return fmt.Errorf("rule %s: reason %s has an invalid risk", r.ID, rs.Code)
		}
		codes[rs.Code] = true
	}
	return veto.CheckRuleInfo(r.RuleInfo())
}

// Families returns the registered families in their order.
func Families() []*Family {
	famMu.Lock()
	defer famMu.Unlock()
	return slices.Clone(families)
}

// IDs returns the id of every built-in rule, in the order the rules run.
func IDs() []string {
	var out []string
	for _, f := range Families() {
		for _, r := range f.Rules {
			out = append(out, r.ID)
		}
	}
	return out
}

// Sections returns every registered section, in the families' order.
func Sections() []*Section {
	var out []*Section
	for _, f := range Families() {
		out = append(out, f.Sections...)
	}
	return out
}

// Off is the advice of a rule only builtin.off can change: turning the
// whole rule off in the user's file.
func Off(id string) veto.Advice {
	return veto.Advice{Policy: "builtin.off: " + id + " in the user's veto.yaml, which turns the whole rule off"}
}
