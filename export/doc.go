// Package export streams veto's stored events to what watches a fleet:
// JSON Lines to a file (rotated by size) or to stdout, and RFC 5424
// syslog over TCP (RFC 6587 octet counting) or UDP.
//
// An Exporter tails the state's log in the background; a decision never
// waits for it. It is at least once: a sink's cursor is stored in the
// state's database (the table veto_export_cursors, made at first use)
// only after the sink accepted and flushed every event before it, and
// each pass reads a window behind the cursor again, so that an event that
// committed after a later one (its time is set before its commit) is not
// skipped. What it sends is the stored event, which holds no argument
// text. docs/serve.md#export says what each sink writes.
package export
