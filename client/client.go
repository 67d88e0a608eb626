// Package client is a small Go client of veto serve, the decision
// service. It fails closed: when the service cannot be reached, answers
// late or answers something that is not a verdict, Decide returns a deny
// (reason service_unavailable) along with the error, so a caller that only
// looks at the verdict still refuses the call.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vetohq/veto"
)

// ReasonUnavailable is the reason of the deny Decide returns when the
// service gave no verdict.
const ReasonUnavailable = "service_unavailable"

// Client talks to one veto serve.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns a client of the service at base (http://127.0.0.1:8181)
// authenticating with token. A nil hc gets a client with a 5 s timeout.
func New(base, token string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Second}
	}
	return &Client{base: base, token: token, http: hc}
}

// verdictJSON is the service's verdict on the wire.
type verdictJSON struct {
	Verdict    string          `json:"verdict"`
	CallID     string          `json:"call_id"`
	Tool       string          `json:"tool"`
	Run        string          `json:"run"`
	Stage      veto.Stage      `json:"stage"`
	Rule       string          `json:"rule"`
	Reason     string          `json:"reason"`
	ToolDenial veto.ToolDenial `json:"tool_denial"`
	Risk       string          `json:"risk"`
	Message    string          `json:"message"`
	Advice     *struct {
		Instead string `json:"instead"`
		Policy  string `json:"policy"`
	} `json:"advice"`
	Target *veto.Target   `json:"target"`
	Args   map[string]any `json:"args"`
	Seq    uint64         `json:"seq"`
	// WouldDeny and WouldReason, on an allow: a rule in monitor mode
	// would have refused the call.
	WouldDeny   string          `json:"would_deny"`
	WouldReason string          `json:"would_reason"`
	Raw         json.RawMessage `json:"-"`
}

func (j *verdictJSON) verdict() (veto.Verdict, error) {
	v := veto.Verdict{Allowed: j.Verdict == "allow", Ask: j.Verdict == "ask", CallID: j.CallID, Tool: j.Tool, Run: j.Run, Stage: j.Stage,
		Rule: j.Rule, Reason: j.Reason, ToolDenial: j.ToolDenial, Message: j.Message, Args: j.Args, Seq: j.Seq}
	if v.Allowed {
		v.WouldDeny, v.WouldReason = j.WouldDeny, j.WouldReason
	}
	if j.Verdict != "allow" && j.Verdict != "deny" && j.Verdict != "ask" {
		return veto.Verdict{}, fmt.Errorf("client: the answer is not a verdict")
	}
	if j.Risk != "" {
		r, err := veto.ParseRisk(j.Risk)
		if err != nil {
			return veto.Verdict{}, fmt.Errorf("client: the verdict's risk: %w", err)
		}
		v.Risk = r
	}
	if j.Advice != nil {
		v.Advice = veto.Advice{Instead: j.Advice.Instead, Policy: j.Advice.Policy}
	}
	if j.Target != nil {
		v.Target = *j.Target
	}
	return v, nil
}

// unavailable is the deny of a call the service did not decide.
func unavailable(c *veto.Call, err error) (veto.Verdict, error) {
	return veto.Verdict{CallID: c.ID, Tool: c.Tool, Run: c.Run.Ref, Stage: veto.StageEngine, Reason: ReasonUnavailable,
		Risk: veto.RiskHigh, Message: "veto's decision service gave no verdict, so the call is refused."}, err
}

// Decide asks whether call may run. The verdict is always usable: on any
// failure it is a deny, and err says what failed.
func (c *Client) Decide(ctx context.Context, call *veto.Call) (veto.Verdict, error) {
	b, err := veto.EncodeCall(call)
	if err != nil {
		return unavailable(call, fmt.Errorf("client: encode the call: %w", err))
	}
	var j verdictJSON
	if _, err := c.do(ctx, "POST", "/v1/decide", b, &j, true); err != nil {
		return unavailable(call, err)
	}
	v, err := j.verdict()
	if err != nil {
		return unavailable(call, err)
	}
	return v, nil
}

// Observe records what call did.
func (c *Client) Observe(ctx context.Context, call *veto.Call, outcome veto.Outcome) error {
	b, err := veto.EncodeCall(call)
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	m["outcome"], _ = json.Marshal(outcome)
	body, _ := json.Marshal(m)
	_, err = c.do(ctx, "POST", "/v1/observe", body, nil, false)
	return err
}

// Start opens a run.
func (c *Client) Start(ctx context.Context, run string, fresh bool) error {
	body, _ := json.Marshal(map[string]any{"ref": run, "fresh": fresh})
	_, err := c.do(ctx, "POST", "/v1/runs", body, nil, false)
	return err
}

// Suspend parks call until a person approves it (veto.AwaitApproval) or
// fills in fields (veto.AwaitInput). The suspension holds the call's
// arguments: keep it in the runtime's own state.
func (c *Client) Suspend(ctx context.Context, call *veto.Call, kind veto.SuspendKind, fields []string) (json.RawMessage, error) {
	b, err := veto.EncodeCall(call)
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(map[string]any{"call": json.RawMessage(b), "kind": kind, "fields": fields})
	var out struct {
		Suspension json.RawMessage `json:"suspension"`
	}
	if _, err := c.do(ctx, "POST", "/v1/suspend", body, &out, false); err != nil {
		return nil, err
	}
	return out.Suspension, nil
}

// Resumed is the answer to a resume: whether the call may run now, and
// with which arguments. A call denied at resume is a failed tool call.
type Resumed struct {
	Verdict veto.Verdict
	Execute bool
	Args    map[string]any
}

// Resume decides a suspended call again: approved, or with a person's
// input (exactly one of the two). On any failure the call does not run.
func (c *Client) Resume(ctx context.Context, suspension json.RawMessage, approved bool, input map[string]any) (Resumed, error) {
	req := map[string]any{"suspension": suspension}
	if approved {
		req["approved"] = true
	} else {
		req["input"] = input
	}
	body, _ := json.Marshal(req)
	var out struct {
		Verdict verdictJSON    `json:"verdict"`
		Execute bool           `json:"execute"`
		Args    map[string]any `json:"args"`
	}
	fail := func(err error) (Resumed, error) {
		v, _ := unavailable(&veto.Call{}, nil)
		return Resumed{Verdict: v}, err
	}
	if _, err := c.do(ctx, "POST", "/v1/resume", body, &out, true); err != nil {
		return fail(err)
	}
	v, err := out.Verdict.verdict()
	if err != nil {
		return fail(err)
	}
	return Resumed{Verdict: v, Execute: out.Execute && v.Allowed, Args: out.Args}, nil
}

// Input is a person's values for a call suspended for input, and who
// gave them.
type Input struct {
	Values map[string]any // the declared fields, each a string as typed
	By     veto.Actor
}

// MaxInputWait is the longest AwaitInput waits in one request.
const MaxInputWait = 60 * time.Second

// AwaitInput waits up to wait (at most MaxInputWait) for a person's
// values for the call this client's actor suspended for input
// (Suspend with veto.AwaitInput) through this service, given on its page,
// and takes them: the service gives them once, then holds them no longer.
// ok is false when none came within wait: ask again. Resume the call with
// them (Resume(ctx, suspension, false, in.Values)); they are arguments,
// so keep them nowhere else. An *Error of status 404 means the service
// keeps no request of the call (suspended through another instance,
// expired, or taken already), 403 that another actor suspended it.
func (c *Client) AwaitInput(ctx context.Context, run, callID string, wait time.Duration) (in Input, ok bool, err error) {
	if wait < 0 || wait > MaxInputWait {
		return Input{}, false, fmt.Errorf("client: a wait for input is at most %s", MaxInputWait)
	}
	u := strings.TrimSuffix(c.base, "/") + "/v1/inputs/" + url.PathEscape(run) + "/" + url.PathEscape(callID) +
		"?wait=" + strconv.FormatInt(wait.Milliseconds(), 10) + "ms"
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return Input{}, false, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	hc := *c.http // the request outlasts a short timeout of the client's
	if hc.Timeout != 0 && hc.Timeout < wait+10*time.Second {
		hc.Timeout = wait + 10*time.Second
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Input{}, false, fmt.Errorf("client: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Input{}, false, fmt.Errorf("client: read the answer: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusNoContent:
		return Input{}, false, nil
	case http.StatusOK:
	default:
		var e struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		}
		json.Unmarshal(b, &e)
		return Input{}, false, &Error{Status: resp.StatusCode, Reason: e.Reason, Message: e.Message}
	}
	var out struct {
		Input map[string]any `json:"input"`
		By    veto.Actor     `json:"by"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Input == nil {
		return Input{}, false, errors.New("client: the answer is not JSON of the expected shape")
	}
	return Input{Values: out.Input, By: veto.Actor{Kind: out.By.Kind, ID: out.By.ID}}, true, nil
}

// Error is a refusal the service gave that is not a verdict on a call:
// its HTTP status, reason code and message.
type Error struct {
	Status  int
	Reason  string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("veto serve: %d %s: %s", e.Status, e.Reason, e.Message)
}

// do sends one request. With verdict set, a 503 or 504 carrying a verdict
// is that verdict (a deny), not an error.
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any, verdict bool) (int, error) {
	u, err := url.JoinPath(c.base, path)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("client: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("client: read the answer: %w", err)
	}
	ok := resp.StatusCode == http.StatusOK ||
		(verdict && (resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusGatewayTimeout))
	if !ok {
		var e struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		}
		json.Unmarshal(b, &e)
		return resp.StatusCode, &Error{Status: resp.StatusCode, Reason: e.Reason, Message: e.Message}
	}
	if out == nil {
		return resp.StatusCode, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return resp.StatusCode, errors.New("client: the answer is not JSON of the expected shape")
	}
	return resp.StatusCode, nil
}
