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
// own: GET /ui/login?k=KEY with the one-time key veto ui prints, or POST
// /ui/login with a person's token of veto token create in the form's body
// (a token is never taken from an address), gives an HttpOnly,
// SameSite=Strict cookie and sends the browser on to /ui. Every other /ui
// page needs it. A session opened with a token verifies the token again
// on each use and ends when it is revoked; the table of sessions is
// bounded and swept (sessions.go). Every id the page puts in an address
// is one escaped path segment (paths.go), and its live stream frames
// each card so that no text in it can forge an event (stream.go).
package page
