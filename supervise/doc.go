// Package supervise runs a command under a seccomp user-notification supervisor with a Landlock floor: each program
// the command's process tree executes, each file it opens, creates, renames, links or removes and each connection it
// makes is shown to a decider (Config.Decide) before the kernel carries it out, and fails with an error when the
// decider refuses. It is the kernel half of `veto exec`; pure Go (golang.org/x/sys/unix, no cgo), Linux on amd64
// (elsewhere Run returns ErrUnsupported and Probe says why).
//
// # Changes from the API as first asked
//
//   - The listener travels by pidfd_getfd, not SCM_RIGHTS: the filter notifies sendmsg (a destination in a
//     struct msghdr is a connection the decider must see), so the child's own sendmsg of the listener would wait
//     for a supervisor that has no listener yet. The child writes the listener's number on the socketpair; the
//     parent takes it with pidfd_open + pidfd_getfd (Linux 5.6; the parent may, as the child's parent) and
//     acknowledges; the child closes its copy before the command runs.
//   - Added: Kinds Mkdir, Link, Symlink; Request.Syscall and Request.Family; Config.NetNS and Config.Workers;
//     Floor.NoTemp and Floor.BestEffort; DeviceWrites; ErrUnsupported.
//
// # How
//
// Run re-executes /proc/self/exe as ["veto-supervise", marker] with an empty environment and one end of a
// socketpair as fd 3; Child, called first thing in main, sees the marker and never returns. The marker only ever
// makes a process install filters: nothing a caller sets makes Child skip one, and a failure of any step exits
// non-zero before the command runs, with the reason sent to the parent (Run returns it as an error). The child, on
// its locked thread: reads the command; PR_SET_PDEATHSIG(SIGKILL) and a check that its parent is still the
// supervisor; PR_SET_NO_NEW_PRIVS (always, root or not); unshare(CLONE_NEWNET) and lo up when Config.NetNS; chdir;
// the Landlock floor (landlock_create_ruleset, path-beneath rules, landlock_restrict_self); the seccomp filter with
// SECCOMP_FILTER_FLAG_NEW_LISTENER; the listener handed over; every descriptor from 3 up marked close-on-exec (the
// command gets its stdio and nothing else); execve from the same thread, so the command inherits the thread's
// filter and Landlock domain. The command's own execve is the first request the decider sees.
//
// The filter (classic BPF written by hand, see filter): a system call of another architecture (int 0x80) or with
// the x32 bit kills the process; execve, execveat, open, openat, openat2, creat, connect, sendmsg, sendmmsg, sendto
// with a destination, unlink, unlinkat, rmdir, rename, renameat, renameat2, mkdir, mkdirat, link, linkat, symlink,
// symlinkat and truncate go to the supervisor; io_uring_setup/enter/register, ptrace, process_vm_writev and
// pidfd_getfd fail with EPERM, and so do chroot, pivot_root, setns, mount, umount2 and the new mount API,
// open_by_handle_at (an open with no path, for root), userfaultfd (it would make the race below a sure thing),
// uselib, and mknod/mknodat of a block or character device (root: a disk's node under a harmless name);
// seccomp(SECCOMP_SET_MODE_FILTER) asking for a listener of its own fails with EPERM (the kernel asks the
// newest filter's listener first, which could answer CONTINUE for this one); everything else runs.
//
// The supervisor polls the listener; each notification (SECCOMP_IOCTL_NOTIF_RECV, the ioctl numbers computed as
// the kernel's headers define them, the structure sizes checked against SECCOMP_GET_NOTIF_SIZES by Probe) is received
// by one of Config.Workers workers that take turns waiting on the listener and decided on the thread that received
// it (the listener set to SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, so that the kernel wakes it on the caller's CPU), so
// that one slow decision holds only its own worker and does not stall other processes:
// strings, argv and sockaddrs are read with process_vm_readv (or /proc/PID/mem), relative paths resolved against
// /proc/PID/cwd or /proc/PID/fd/DIRFD, /proc/self renamed for the caller, and the symbolic links of what exists
// followed (the last one only where the system call follows it), so the decider sees the file the kernel will
// reach, whatever the spelling. Then SECCOMP_IOCTL_NOTIF_ID_VALID: if the caller died or was interrupted meanwhile,
// what was read is dropped unanswered. Then Decide, and the reply: allowed, SECCOMP_USER_NOTIF_FLAG_CONTINUE;
// refused, an error. A notification that cannot be read, a Decide that panics and a nil Decide refuse.
//
// Errors: a refused exec or connect fails with EPERM ("Operation not permitted": a refusal, as the issue asks, not a
// file's mode); a refused open, unlink, rename, mkdir, link or symlink with EACCES ("Permission denied": what a
// program expects of a permission check on a path, and what the Landlock floor returns, so both layers look alike).
// Run prints nothing: the decider writes the stderr line naming Verdict.Rule and Verdict.Reason.
//
// # Fail closed
//
//   - If the filters cannot be installed, the command does not run (Run's error says why).
//   - If the supervisor dies, its direct child dies (PR_SET_PDEATHSIG SIGKILL, armed from a thread kept alive until
//     the child is reaped, and again by the child); what is left of the tree keeps running, but every notified system
//     call fails with ENOSYS, one pending at the time and every new one (the kernel's answer when the listener is
//     closed; TestChildDiesWithSupervisor checks both). When Run returns, the listener is closed the same way: a
//     background process that outlives the command can no longer exec, open or connect.
//   - A request that cannot be read is refused.
//
// Run returns when the command has exited and, where Stdout or Stderr is not an *os.File, when every process that
// holds the pipe has closed it (the tree stays supervised until then).
//
// What the decider sees of some shapes: a script's execve is one request, Path the script (the kernel then runs its
// #! interpreter without another; the interpreter's open of the script follows as an Open); fexecve of a memfd is an
// Exec whose Path is "/memfd:NAME (deleted)", and of a deleted file "PATH (deleted)" (a decider refuses both); the
// command's own execve is the first request.
//
// For the decider: a hard link (Link) or a rename (Rename) of a credential gives it a second, harmless name that
// later opens are decided by; refuse both when Path is a credential (the floor refuses them too: Landlock does not
// let a reparenting grant a file a right it lacked, TestFloorLinkAndRename). An open for writing below /proc (a
// process's mem, outside the tree, is a way out of it) and for reading /proc/PID/mem or environ are worth refusing
// too (the floor refuses the writes, not the reads). /proc/PID/fd/N arrives resolved to the file it names, another
// process's too.
//
// Run's context ending kills the command with SIGKILL (a caller that wants the command to see SIGINT first lets
// the terminal deliver it, as it does to the whole foreground process group, and ends the context later). If main
// does not call Child, the re-executed child is the program itself with an argument it does not know: it exits, and
// Run returns the handshake's error (the command does not run).
//
// # Cost
//
// Every notified system call is a round trip to the supervisor, the many opens for reading a dynamic loader makes
// included (three requests for each /bin/true: its execve, ld.so.cache, libc): the decider must answer those fast (a
// prefix test on Path; the lead's decider filters opens for reading that are not of a credential path before any
// rule). Measured on this machine (2 cores shared with other work, load average 7–27 during the runs, so the
// figures are high and noisy), with a decider that does a prefix test:
//
//   - BenchmarkDecidedOpen: an open+close from inside the workload, p50 11–34 µs supervised against 0.9–1.7 µs bare:
//     a decided open costs 10–33 µs at p50 (19.6 µs at load 7; p90 20–120 µs).
//   - BenchmarkDecidedExec: an execve (of a file that is not executable, so that only the decision is timed), p50
//     14–24 µs of decision (16.4 µs at load 7).
//   - BenchmarkBuildLike: 300 /bin/true from sh (906 requests): wall 1.05× at load 7 (242 → 254 ms), 1.4–2.3× at
//     load 25; CPU 1.3–1.4×. 300 cat of small files (1207 requests): wall 1.45× at load 7 (229 → 331 ms), up to 3× at
//     load 25; CPU 1.5–1.9×. Under load each round trip waits twice for a CPU, which the wall ratio shows. Most of
//     the supervisor's own time is in system calls: reading the path, one lstat per path component to follow
//     links, ID_VALID and the reply.
//
// # Known limits
//
//   - CONTINUE is racy for pointer arguments: the kernel reads the path again after the supervisor has read it, and
//     another thread of the caller (or a process sharing its memory) can change it in between. This is why the
//     Landlock floor is under the decisions: a race can widen what passes the decider, never what passes the floor.
//     A decider that refuses what the floor also refuses (credential reads, writes out of the roots) is safe against
//     it; one that refuses within the floor (a protected file inside a write root) is not, against a racing program.
//   - io_uring is refused outright (its operations open and connect without a system call the filter sees); a
//     program that needs it fails with EPERM, as under Docker's default profile.
//   - ptrace, process_vm_writev and pidfd_getfd are refused: they would let the tree act through a process outside
//     the filter, or change a supervised one's memory after its check. Debuggers and strace do not work under it.
//   - chroot, pivot_root, setns, mount, umount2 and the new mount API (open_tree, move_mount, fsopen, fsconfig,
//     fsmount, fspick, mount_setattr) are refused: a root command would otherwise change what a path names under the
//     supervisor's resolution (a bind mount of a credential over a harmless name). A command that mounts (a test
//     suite using unshare -m) fails with EPERM.
//   - Processes already running are not supervised, and neither is what the command asks of one (a daemon over a
//     unix socket: the decider sees the connect, with the socket's path; a message on an already connected socket
//     is not a request).
//   - File descriptors: the command receives its stdio only; but a descriptor opened before a decision (inherited
//     across exec inside the tree, or passed over a unix socket) is used without another one. execveat with
//     AT_EMPTY_PATH (fexecve) is decided as the file /proc/PID/fd/N names.
//   - no_new_privs: set-user-ID programs (sudo, su) run without their privileges under the supervisor.
//   - 32-bit system calls (int 0x80, other architectures) kill the process; x32 ones too.
//   - Paths are resolved in the supervisor's root and mount namespace, which stay the command's: it cannot chroot,
//     setns or mount (refused above); unshare(CLONE_NEWNS) gives it a copy it cannot change. openat2's
//     RESOLVE_IN_ROOT is resolved within its directory. The floor, applied in the kernel, does not depend on it.
//   - Races, measured: TestRaceStoppedByFloor flips a path between a harmless file and the credential file while
//     another thread opens it: 29 of 2000 opens got past the decider without the floor, none with it.
//   - A write to a file already open, mmap, chmod and chown, mknod of a fifo or socket, bind and a send on a
//     connected socket are not requests (the floor covers mknod).
//
// # The Landlock floor
//
// When Config.Landlock is set, the child applies, before the seccomp filter, a Landlock domain at the highest ABI
// the kernel offers (rights the ABI does not know are left out: REFER from ABI 2, TRUNCATE from 3, the signal and
// abstract-socket scopes from 6): writes (write, truncate, create of every kind, remove, rename, link) only below
// Floor.WriteRoots, DeviceWrites (/dev/null, /dev/tty, /dev/pts, /dev/ptmx, /dev/shm, …; what bash needs, measured
// by TestLandlockFloor) and the temporary directory (a here-document is a temporary file: TMPDIR of the command's
// environment, else /tmp; Floor.NoTemp leaves it out); reads and execs everywhere but below Floor.DenyRead and in
// /dev but DeviceWrites (a root command reading a disk's device node reads every file on it); no
// signal to a process outside the tree (ABI 6); no abstract unix socket of a process outside it (ABI 6). Directory
// listing and device ioctls are not restricted (READ_DIR and IOCTL_DEV are not handled), so `ls ~` and a
// terminal work. Landlock only grants, and a grant covers a whole subtree: to deny a directory, each directory on
// the way from / to it is not granted itself but each of its entries is, but the one on the way, as they are when
// the command starts. The limit: an entry created later in a directory on the way (a new file directly in HOME, when
// HOME/.aws is denied) can be written (when below a write root) but not read back nor executed. A kernel without
// Landlock makes Run refuse unless Floor.BestEffort.
//
// # Kernel features (Probe, for `veto doctor`)
//
// Seccomp user notification with SECCOMP_USER_NOTIF_FLAG_CONTINUE and pidfd_getfd: Linux 5.6, amd64. Landlock:
// Linux 5.13 with landlock in the boot's lsm= list; ABI 7 on 6.18. Network namespaces (Config.NetNS): root.
// Reading the caller's memory: the supervisor is the tree's ancestor, which Yama's ptrace_scope 1 allows; scope 2
// or 3 needs root.
package supervise
