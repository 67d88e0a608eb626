// Package page is veto's page for a person: live decisions, a refusal
// card for each denial, the calls waiting for a person with approve and
// deny, the requests for input, the MCP tools awaiting approval, a run's
// timeline and the what-if of veto replay; server-rendered, a little
// script (app.js) adds new decisions as they are stored. Reading works
// without the script.
//
// It renders HTML over the service's own types (package server) and
// answers through the service's methods; it knows no rule family: what a
// rule wants shown comes as structured fields of its verdicts and events.
// cli mounts it beside the API on one mux (veto serve, veto ui).
//
// A browser cannot send a bearer token, so the page has sessions of its
// own: GET /ui/login?k=KEY, where KEY is the one-time key veto ui prints
// or a token of veto token create, gives an HttpOnly, SameSite=Strict
// cookie and sends the browser on to /ui. Every other /ui page needs it.
package page
