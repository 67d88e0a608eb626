package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/server"
)

// forwardHook answers a hook event through veto serve at base: the event
// goes to POST base/v1/hooks/CLIENT/command with the token of tokenFile
// (else $VETO_TOKEN),
// and the service's reply is the hook's. Every failure — no answer in
// time, a refusal, an answer that is not a reply — blocks the call.
func forwardHook(ctx context.Context, a agent.Adapter, client, base, tokenFile string, stdin io.Reader, timeout time.Duration) agent.Reply {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	b, err := readEvent(ctx, stdin)
	if err != nil {
		return a.Deny("veto could not read the hook event (" + err.Error() + "), so the call is blocked.")
	}
	ev, err := a.Decode(b)
	if err != nil {
		return a.Deny("veto could not read the hook event (" + err.Error() + "), so the call is blocked.")
	}
	if ev.Kind == agent.Ignore {
		return agent.Reply{}
	}
	tok := os.Getenv(TokenEnv)
	if tokenFile != "" {
		if tok, err = readTokenFile(tokenFile); err != nil {
			msg := "veto could not read its token file (it must be 0600, holding one token), so the call is blocked."
			if ev.Kind == agent.Decide {
				return a.Deny(msg)
			}
			return agent.Reply{Exit: 1, Stderr: msg + "\n"}
		}
	}
	rep, cause := ask(ctx, client, base, tok, b)
	if cause == "" {
		return rep
	}
	msg := "veto's decision service " + cause
	if ev.Kind == agent.Decide {
		return a.Deny(msg + ", so the call is blocked.")
	}
	return agent.Reply{Exit: 1, Stderr: msg + ".\n"}
}

// ask posts the event; cause, when set, says why there is no reply, in
// words that hold neither the token nor the service's answer.
func ask(ctx context.Context, client, base, token string, event []byte) (agent.Reply, string) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return agent.Reply{}, "has no usable URL (--url, $VETO_URL)"
	}
	where := "at " + u.Host
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimRight(base, "/")+"/v1/hooks/"+client+"/command", bytes.NewReader(event))
	if err != nil {
		return agent.Reply{}, "has no usable URL (--url, $VETO_URL)"
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if dir := os.Getenv("CLAUDE_PROJECT_DIR"); dir != "" {
		req.Header.Set(server.ProjectDirHeader, dir)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return agent.Reply{}, where + " did not answer in time"
		}
		return agent.Reply{}, where + " cannot be reached"
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return agent.Reply{}, fmt.Sprintf("%s refused the event (HTTP %d)", where, resp.StatusCode)
	}
	var r struct {
		Exit   *int    `json:"exit"`
		Stdout *string `json:"stdout"`
		Stderr *string `json:"stderr"`
	}
	dec := json.NewDecoder(io.LimitReader(resp.Body, 1<<20))
	if err := dec.Decode(&r); err != nil || r.Exit == nil || r.Stdout == nil || r.Stderr == nil {
		return agent.Reply{}, where + " gave an answer that is not a hook reply"
	}
	return agent.Reply{Exit: *r.Exit, Stdout: *r.Stdout, Stderr: *r.Stderr}, ""
}

// readEvent reads stdin within ctx: a client that never closes it does
// not hold the call.
func readEvent(ctx context.Context, r io.Reader) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, agent.MaxEvent+1))
		ch <- result{b, err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			return nil, errors.New("stdin could not be read")
		}
		if len(res.b) > agent.MaxEvent {
			return nil, errors.New("the event is larger than veto reads")
		}
		return res.b, nil
	case <-ctx.Done():
		return nil, errors.New("stdin was not closed in time")
	}
}
