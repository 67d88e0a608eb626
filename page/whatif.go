package page

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/replay"
)

// The what-if of veto replay on the page: a policy file and a Claude Code
// session transcript, uploaded, replayed in memory (replay.Run: the
// recorded world only, paths resolved lexically, a store of its own), and
// every verdict that would change shown as a card. Nothing uploaded is
// written anywhere: the multipart body is read part by part into memory,
// never through ParseMultipartForm (which spills large files to disk),
// and neither the files nor their names are logged. A card names the call
// by its id, tool, rule and reason, never by its arguments.

const (
	whatIfPolicyMax     = 256 << 10 // bytes of policy
	whatIfTranscriptMax = 16 << 20  // bytes of transcript
	whatIfFor           = 30 * time.Second
)

// whatIfChange is one changed verdict as the page shows it.
type whatIfChange struct {
	Index                            int
	CallID, Tool                     string
	Before, BeforeRule, BeforeReason string
	After, AfterRule, AfterReason    string
}

func verdictWord(v replay.Verdict) string {
	switch {
	case !v.Known:
		return "unrecorded"
	case v.Allowed:
		return "allow"
	}
	return "deny"
}

func (pg *Page) uiWhatIf(w http.ResponseWriter, r *http.Request) {
	se := sessionOf(r)
	data := map[string]any{"CSRF": se.csrf}
	show := func(status int) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		uiTemplates().ExecuteTemplate(w, "whatif.html", data)
	}
	if r.Method == http.MethodGet {
		show(http.StatusOK)
		return
	}
	fail := func(status int, msg string) {
		data["Error"] = msg
		show(status)
	}
	if !fromPage(r) {
		fail(http.StatusForbidden, "The form did not come from veto's page.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, whatIfPolicyMax+whatIfTranscriptMax+64<<10)
	parts, err := readWhatIf(r)
	if err != nil {
		fail(http.StatusBadRequest, err.Error())
		return
	}
	if se.csrf == "" || subtle.ConstantTimeCompare(parts["csrf"], []byte(se.csrf)) != 1 {
		fail(http.StatusForbidden, "The form is stale or came from elsewhere; reload the page.")
		return
	}
	if len(parts["transcript"]) == 0 {
		fail(http.StatusBadRequest, "Choose a Claude Code session transcript (a .jsonl file under ~/.claude/projects).")
		return
	}
	cel, err := celrule.New()
	if err != nil {
		fail(http.StatusInternalServerError, "veto could not prepare its rule compiler.")
		return
	}
	layers := []*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}}
	if len(parts["policy"]) > 0 {
		l, err := policy.Parse(policy.KindFlag, "the uploaded policy", parts["policy"])
		if err != nil {
			fail(http.StatusBadRequest, "The policy does not load: "+err.Error())
			return
		}
		layers = append(layers, l)
	}
	p, err := policy.Merge(layers, cel)
	if err != nil {
		fail(http.StatusBadRequest, "The policy does not load: "+err.Error())
		return
	}
	calls, err := replay.ClaudeTranscript(bytes.NewReader(parts["transcript"]))
	if err != nil {
		fail(http.StatusBadRequest, "The transcript cannot be read: "+err.Error()+".")
		return
	}
	if len(calls) == 0 {
		fail(http.StatusBadRequest, "The transcript holds no tool calls.")
		return
	}
	select {
	case pg.whatIfSlot <- struct{}{}:
		defer func() { <-pg.whatIfSlot }()
	case <-r.Context().Done():
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), whatIfFor)
	defer cancel()
	release, err := pg.acquire(ctx)
	if err != nil {
		fail(http.StatusServiceUnavailable, "veto cannot read its state: "+pg.cfg.Cause(err)+".")
		return
	}
	events, err := pg.cfg.Store.Events(ctx, calls[0].Call.Run.Ref, 0)
	release()
	if err != nil {
		fail(http.StatusServiceUnavailable, "veto cannot read the session's events: "+pg.cfg.Cause(err)+".")
		return
	}
	home, _ := os.UserHomeDir()
	rep, err := replay.Run(ctx, calls, events, p, replay.Options{Home: home})
	if err == nil && ctx.Err() != nil {
		err = errors.New("it took longer than " + whatIfFor.String())
	}
	if err != nil {
		fail(http.StatusServiceUnavailable, "The replay failed: "+pg.cfg.Cause(err)+".")
		return
	}
	changes := make([]whatIfChange, 0, len(rep.Changes))
	for _, c := range rep.Changes {
		changes = append(changes, whatIfChange{Index: c.Index, CallID: c.CallID, Tool: c.Tool,
			Before: verdictWord(c.Before), BeforeRule: c.Before.Rule, BeforeReason: c.Before.Reason,
			After: verdictWord(c.After), AfterRule: c.After.Rule, AfterReason: c.After.Reason})
	}
	data["Report"], data["Changes"], data["Run"], data["Revision"] = rep, changes, calls[0].Call.Run.Ref, p.Revision()
	show(http.StatusOK)
}

// readWhatIf reads the form's parts into memory, each within its bound:
// csrf, policy and transcript; any other part is refused.
func readWhatIf(r *http.Request) (map[string][]byte, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, errors.New("The form is not a file upload (multipart/form-data).")
	}
	limits := map[string]int64{"csrf": 256, "policy": whatIfPolicyMax, "transcript": whatIfTranscriptMax}
	out := map[string][]byte{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return nil, errors.New("The upload is larger than the page takes.")
			}
			return nil, errors.New("The upload cannot be read.")
		}
		name := part.FormName()
		max, ok := limits[name]
		if _, dup := out[name]; !ok || dup {
			part.Close()
			return nil, errors.New("The form holds a part other than csrf, policy and transcript, or one twice.")
		}
		b, err := io.ReadAll(io.LimitReader(part, max+1))
		part.Close()
		if err != nil {
			return nil, errors.New("The upload cannot be read, or is larger than the page takes.")
		}
		if int64(len(b)) > max {
			return nil, errors.New("The " + name + " is larger than the page takes (" + sizeWord(max) + ").")
		}
		out[name] = b
	}
}

func sizeWord(n int64) string {
	if n >= 1<<20 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n>>10, 10) + " KiB"
}
