package page

import (
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/server"
)

// uiInput is POST /ui/inputs/{run}/{call}: a person's values for a call
// waiting for input, from the page's form. As the approve and deny forms:
// the session's actor, who must be a person; the form's token and the
// browser's word that the request comes from this page. The values are
// bounded, must name the call's fields exactly, and are kept in memory
// until the runtime takes them; the answer shows none of them.
func (pg *Page) uiInput(w http.ResponseWriter, r *http.Request) {
	se := sessionOf(r)
	fail := func(status int, msg string) { formFailed(w, status, msg) }
	if !fromPage(r) {
		fail(http.StatusForbidden, "The input did not come from veto's page.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, server.MaxInputTotal+server.MaxInputFields*(server.MaxInputName+16)+4096)
	err := r.ParseForm()
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		fail(http.StatusRequestEntityTooLarge, "The values are larger than veto keeps: at most 8 KiB a field and 64 KiB in all.")
		return
	}
	if err != nil || se.csrf == "" || subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(se.csrf)) != 1 {
		fail(http.StatusForbidden, "The form is stale or came from elsewhere; reload the page.")
		return
	}
	if se.actor.Kind != "user" || se.actor.ID == "" || pg.api.Gate() == nil || pg.cfg.PageOnly {
		w.Header().Set(server.ReasonHeader, server.ReasonPersonRequired)
		fail(http.StatusForbidden, "Only a person (a user: token) gives a call's input, on the page of the veto serve the call was suspended through.")
		return
	}
	if !formNamesItsAddress(r, "run", "call") {
		fail(http.StatusBadRequest, "The form names another call than the address it was sent to; reload the page.")
		return
	}
	values := map[string]string{}
	total := 0
	for k, vs := range r.PostForm {
		if k == "csrf" || k == "run" || k == "call" {
			continue
		}
		name, ok := strings.CutPrefix(k, "in.")
		if !ok || len(vs) != 1 {
			fail(http.StatusBadRequest, "The form must give every field the call waits for, once, and no other.")
			return
		}
		if len(vs[0]) > server.MaxInputValue {
			fail(http.StatusRequestEntityTooLarge, "The values are larger than veto keeps: at most 8 KiB a field and 64 KiB in all.")
			return
		}
		total += len(vs[0])
		values[name] = vs[0]
	}
	if total > server.MaxInputTotal {
		fail(http.StatusRequestEntityTooLarge, "The values are larger than veto keeps: at most 8 KiB a field and 64 KiB in all.")
		return
	}
	run, call := r.PathValue("run"), r.PathValue("call")
	if status, msg := pg.api.GiveInput(run, call, values, se.actor); status != http.StatusOK {
		fail(status, msg)
		return
	}
	pg.cfg.Logger.LogAttrs(r.Context(), slog.LevelInfo, "veto serve: a person gave a call's input", slog.String("run", run),
		slog.String("call_id", call), slog.String("by", se.actor.Kind+":"+se.actor.ID))
	http.Redirect(w, r, "/ui?run="+url.QueryEscape(run), http.StatusSeeOther)
}

// uiInputs is GET /ui/inputs: the section of the requests for input, for
// the page's script to add the ones that arrived since it was drawn.
func (pg *Page) uiInputs(w http.ResponseWriter, r *http.Request) {
	se := sessionOf(r)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	uiTemplates().ExecuteTemplate(w, "inputs", pg.inputsData(r.URL.Query().Get("run"), se))
}

// inputsData is what the section of the requests for input is drawn from.
func (pg *Page) inputsData(run string, se uiSession) map[string]any {
	return map[string]any{"Inputs": pg.api.Inputs(run), "CSRF": se.csrf,
		"CanAnswer": se.actor.Kind == "user" && se.actor.ID != "" && pg.api.Gate() != nil && !pg.cfg.PageOnly}
}

// markInputs adds to the cards of suspended calls what became of their
// request for input in this instance: answered on the page, by whom.
func (pg *Page) markInputs(cards []card) {
	for i := range cards {
		c := &cards[i]
		if c.Verdict != "suspended" || c.Awaiting != string(veto.AwaitInput) {
			continue
		}
		if st, by := pg.api.InputState(c.Run, c.CallID); by.Kind != "" {
			c.Input, c.By = st, by.Kind+":"+by.ID
		}
	}
}
