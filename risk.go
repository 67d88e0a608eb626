package veto

import "fmt"

// Risk is how dangerous a denied call would have been. The zero value,
// RiskNone, is what an allowed call carries.
type Risk uint8

// The risk levels, in increasing order.
const (
	RiskNone Risk = iota
	RiskLow
	RiskMedium
	RiskHigh
	RiskCritical
)

var riskNames = [...]string{"none", "low", "medium", "high", "critical"}

func (r Risk) String() string {
	if int(r) < len(riskNames) {
		return riskNames[r]
	}
	return fmt.Sprintf("risk(%d)", uint8(r))
}

// ParseRisk returns the Risk named s.
func ParseRisk(s string) (Risk, error) {
	for i, n := range riskNames {
		if n == s {
			return Risk(i), nil
		}
	}
	return RiskNone, fmt.Errorf("unknown risk level %q (want none, low, medium, high or critical)", s)
}

// MarshalText encodes r by name.
func (r Risk) MarshalText() ([]byte, error) {
	if int(r) >= len(riskNames) {
		return nil, fmt.Errorf("invalid risk %d", uint8(r))
	}
	return []byte(riskNames[r]), nil
}

// UnmarshalText decodes a risk name.
func (r *Risk) UnmarshalText(b []byte) error {
	v, err := ParseRisk(string(b))
	*r = v
	return err
}

// RiskMapping maps a rule's reason codes to risk levels, as a rule declares
// them. A reason not in ByReason has the Default level; a zero Default is
// treated as RiskMedium so a denial never carries RiskNone.
type RiskMapping struct {
	Default  Risk
	ByReason map[string]Risk
}

// Of returns the risk of a denial with the given reason code.
func (m RiskMapping) Of(reason string) Risk {
	if r, ok := m.ByReason[reason]; ok && r != RiskNone {
		return r
	}
	if m.Default == RiskNone {
		return RiskMedium
	}
	return m.Default
}
