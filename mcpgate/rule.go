package mcpgate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"

	"github.com/vetohq/veto"
)

// Reasons the pin rule refuses with.
const (
	ReasonToolNew      = "tool_new"
	ReasonToolChanged  = "tool_definition_changed"
	ReasonToolTooLarge = "tool_definition_too_large"
	ReasonToolName     = "tool_name_invalid"
)

// RuleID is the pin rule's id.
const RuleID = "mcp.pinned"

// pinStatus is what the gateway found of a call's tool before deciding:
// the rule reads it from the decision's context.
type pinStatus int

const (
	pinOK pinStatus = iota + 1
	pinNew
	pinChanged
	pinTooLarge // its definition is over MaxDefinition
	pinBadName  // its name is outside the MCP character set
)

type pinKey struct{}

func withPin(ctx context.Context, s pinStatus) context.Context {
	return context.WithValue(ctx, pinKey{}, s)
}

// pinRule refuses a call of a tool whose definition is not the one
// pinned: a tool that came after the server's first listing, or whose
// name, description or schema changed since. It runs in the gate, so its
// refusals are decisions like any other: recorded, in the run's history.
type pinRule struct{ server string }

var errNoPin = errors.New("mcpgate: the call's pin status is unknown")

func (r *pinRule) Info() veto.RuleInfo {
	advice := veto.Advice{Instead: "Use the server's other tools; a person must read and approve this tool's definition first (veto mcp pins --name " +
		r.server + " --show, then veto mcp approve --name " + r.server + ")."}
	return veto.RuleInfo{ID: RuleID, FixedMessages: true,
		Risk:   veto.RiskMapping{Default: veto.RiskHigh},
		Advice: veto.AdviceMapping{Default: advice}}
}

func (*pinRule) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	s, _ := ctx.Value(pinKey{}).(pinStatus)
	switch s {
	case pinOK:
		return veto.Allow(), nil
	case pinNew:
		return veto.Deny(ReasonToolNew, "This tool was not in the server's first listing and no person has approved it yet."), nil
	case pinChanged:
		return veto.Deny(ReasonToolChanged, "This tool's definition (its name, description or input schema) changed since it was pinned, and no person has approved the change yet."), nil
	case pinTooLarge:
		return veto.Deny(ReasonToolTooLarge, "This tool's definition is over 64 KiB, more than a person can be shown whole, so it is never pinned."), nil
	case pinBadName:
		return veto.Deny(ReasonToolName, "This tool's name holds characters outside the MCP tool-name set (letters, digits, _ - .), so the gateway neither lists nor calls it."), nil
	}
	return veto.Decision{}, errNoPin
}

// newCallID names a call the gateway decides.
func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "mcp-" + hex.EncodeToString(b[:])
}
