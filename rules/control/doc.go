// Package control holds veto.control: the rule that keeps veto's own
// switches out of the guarded agent's reach. The agent runs as the same
// OS user as the person, so nothing the OS checks tells them apart; the
// gate itself refuses every call of the agent that would change what veto
// decides or records:
//
//   - veto's binaries (veto, veto-hook), found by name, by path, through
//     symlinks and copies (a Go binary built from veto's module), and
//     through go run, with a subcommand not known to be read-only
//     (approve, init, uninstall, token, ui, serve, serve-hooks, hook, ...);
//     veto-hook with anything;
//   - a write of veto's files wherever they lie, write roots included:
//     every policy level, the state and its side files, the socket
//     directory, the registered binaries and the clients' settings; a read
//     of the state or the socket directory; /etc/ld.so.preload, and an
//     LD_PRELOAD given to veto;
//   - a network tool reaching a listener veto serve or veto ui recorded
//     (Listening), an address the policy names, or the hook socket;
//   - reading or expanding a VETO_* variable;
//   - a signal to veto's processes by name (pkill, killall, kill $(pgrep)).
//
// Its family runs first, so a refusal names veto.control and its own
// reason code rather than whichever file or command rule would also refuse.
package control
