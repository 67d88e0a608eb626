// Package presence proves that a person, not the agent veto guards, is at
// the terminal before veto takes a person's answer locally (veto approve,
// veto mcp approve) or hands over the page's key (veto ui).
//
// The guarded agent runs as the same OS user as the person, so the user
// id proves nothing. What a process without the person cannot give is a
// controlling terminal that no guarded process holds, and a code read
// back from it. Prove refuses, without prompting, when:
//
//   - the process is not in the initial user namespace (inside one the
//     agent could remount /proc or the registry, or hide its tree);
//   - the registry of guarded clients cannot be trusted (not private to
//     this user, or under a FUSE mount);
//   - the caller or one of its ancestors is a guarded client (the
//     registry: the hook notes the client that runs it, by PID and start
//     time, so that a reused PID is not taken for it);
//   - there is no controlling terminal (/dev/tty does not open);
//   - the controlling terminal is a pseudo-terminal whose master is held
//     by a guarded client or one of its descendants (the agent's own
//     script -c, python pty or expect), or one of those processes hides
//     its descriptors.
//
// Then, when the question asks for it, the prompt is written to /dev/tty
// (never to stdout or stderr, which the agent may read): what is answered
// and why the prompt appeared, followed by a random code the person types
// back on /dev/tty. Input typed before the prompt is discarded.
//
// There is no switch that skips any of this: no flag, variable or file
// (the agent could set it). See docs/threat-model.md for what it does not
// defend.
package presence
