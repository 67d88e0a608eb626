// Package replay re-decides recorded calls under a policy and reports every
// verdict that would change: the what-if a person runs before tightening a
// policy. The calls come from a client's transcript (veto keeps no copy of
// arguments); world facts come only from the probes veto recorded, and
// paths resolve lexically: replay never touches the live filesystem or the
// network.
package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/vetohq/veto"
)

// Call is one recorded call: what the agent asked for, and what happened.
type Call struct {
	Call    veto.Call
	Outcome veto.Outcome // succeeded, failed; pending when no result was recorded
}

type transcriptLine struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Message   struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type contentItem struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Input     map[string]any `json:"input"`
	ToolUseID string         `json:"tool_use_id"`
	IsError   bool           `json:"is_error"`
}

// ClaudeTranscript reads a Claude Code session transcript (the JSONL file
// under ~/.claude/projects): every tool_use of the assistant, in order,
// with the outcome its tool_result reported. Lines of other kinds are
// skipped; a line that is not JSON is an error naming it.
func ClaudeTranscript(r io.Reader) ([]Call, error) {
	var calls []Call
	index := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var l transcriptLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("transcript line %d: not JSON", line)
		}
		var items []contentItem
		if len(l.Message.Content) == 0 || l.Message.Content[0] != '[' {
			continue // text content
		}
		if err := json.Unmarshal(l.Message.Content, &items); err != nil {
			return nil, fmt.Errorf("transcript line %d: unexpected content", line)
		}
		for _, it := range items {
			switch it.Type {
			case "tool_use":
				if it.ID == "" || it.Name == "" {
					continue
				}
				index[it.ID] = len(calls)
				calls = append(calls, Call{Outcome: veto.Pending, Call: veto.Call{
					ID: it.ID, Tool: it.Name, Args: numbers(it.Input), Cwd: l.Cwd,
					Run: veto.Run{Ref: l.SessionID, Fresh: true},
				}})
			case "tool_result":
				if i, ok := index[it.ToolUseID]; ok {
					calls[i].Outcome = veto.Succeeded
					if it.IsError {
						calls[i].Outcome = veto.Failed
					}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return calls, nil
}

// numbers turns float64 arguments into json.Number, as veto decodes them.
func numbers(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	dec := json.NewDecoder(bytesReader(b))
	dec.UseNumber()
	if dec.Decode(&out) != nil {
		return m
	}
	return out
}
