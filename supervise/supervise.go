package supervise

import (
	"errors"
	"io"
	"net/netip"
)

// Kind of a request the supervised process makes.
type Kind int

// The kinds of request the supervisor decides. The list is closed: a new kind is a change of this package.
const (
	// Exec is execve or execveat: Path is the program file, Argv its argv.
	Exec Kind = iota + 1
	// Open is open, openat, openat2, creat or truncate (as O_WRONLY|O_TRUNC): Path is the file, Flags the open
	// flags, Write whether it may write.
	Open
	// Connect is connect, or sendto/sendmsg/sendmmsg naming a destination: Addr for AF_INET/AF_INET6, Path for AF_UNIX
	// (an abstract socket's name begins with "@"), neither for other families (Family says which).
	Connect
	// Unlink is unlink, unlinkat or rmdir: Path is the name removed (Flags holds AT_REMOVEDIR for a directory).
	Unlink
	// Rename is rename, renameat or renameat2: Path is the old name, Path2 the new one.
	Rename
	// Mkdir is mkdir or mkdirat: Path is the new directory.
	Mkdir
	// Link is link or linkat: Path is the existing file, Path2 the new name.
	Link
	// Symlink is symlink or symlinkat: Path is the new link's name, Path2 the target it points at, resolved
	// against the link's directory (the text itself is not kept).
	Symlink
)

var kindNames = [...]string{Exec: "exec", Open: "open", Connect: "connect", Unlink: "unlink", Rename: "rename",
	Mkdir: "mkdir", Link: "link", Symlink: "symlink"}

// String names the kind in lower case ("exec", "open", …).
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Request is one system call the supervised tree made, read from the kernel's view.
type Request struct {
	Kind Kind
	// Syscall names the system call ("openat", "execve", …), for logs.
	Syscall string
	// Pid is the calling thread's id as the supervisor's pid namespace numbers it.
	Pid int
	// Path is absolute and cleaned, resolved against the caller's cwd or dirfd as the kernel sees it
	// (/proc/PID/cwd, /proc/PID/fd/N), /proc/self named for the caller, and the symbolic links of the part that exists
	// followed (so a link to a credential file is decided as the credential file). "" for Connect to an address.
	Path string
	// Path2 is Rename's and Link's new path, Symlink's target.
	Path2 string
	// Argv is Exec's argv as passed (at most 4096 arguments and 1 MiB are read; a longer one is refused unread).
	Argv []string
	// Write is true for Open with O_WRONLY, O_RDWR, O_CREAT, O_TRUNC or O_APPEND, and for every other kind but Exec
	// and Connect.
	Write bool
	// Flags is Open's flags, Unlink's AT_REMOVEDIR, Exec's execveat flags, Rename's renameat2 flags.
	Flags int
	// Addr is Connect's AF_INET/AF_INET6 destination (IPv4-mapped IPv6 addresses unmapped).
	Addr netip.AddrPort
	// Family is Connect's address family (unix.AF_INET, AF_INET6, AF_UNIX, …).
	Family int
}

// Verdict is the decider's answer. Rule and Reason name the veto rule for the stderr line.
type Verdict struct {
	Allow        bool
	Rule, Reason string
}

// Config is one supervised command.
type Config struct {
	// Argv is the command; Argv[0] is looked up on PATH as exec.LookPath does (with Env's PATH when Env has one).
	Argv []string
	// Env is the command's environment (nil: the supervisor's own).
	Env []string
	// Dir is the command's working directory ("": the supervisor's).
	Dir string
	// Stdin, Stdout and Stderr are the child's own stdio (nil: the supervisor's). An *os.File is passed as it is;
	// any other reader or writer through a pipe.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Decide is called for each request, from several goroutines at once: it must be safe for concurrent use, and
	// fast for the many opens for reading a program makes (a dynamic loader alone opens a few files per exec). A
	// panic in Decide refuses the request. Nil refuses everything.
	Decide func(Request) Verdict
	// Landlock is the floor under the decisions (nil: none). When the kernel has no Landlock, Run refuses to run
	// the command unless BestEffort is set.
	Landlock *Floor
	// NetNS unshares a new network namespace for the child before it runs (root only; for tests).
	NetNS bool
	// Workers bounds how many requests are decided at once (0: 32).
	Workers int
}

// Floor is what Landlock enforces under the decisions.
type Floor struct {
	// WriteRoots: writes (create, write, truncate, remove, rename, link) only below these, plus the devices a shell
	// needs (DeviceWrites) and the temporary directory (TMPDIR of the command's environment, else /tmp) unless
	// NoTemp.
	WriteRoots []string
	// DenyRead: no reads (and no execs) of files below these. See doc.go for how and its limit.
	DenyRead []string
	// NoTemp leaves the temporary directory out of the writable places.
	NoTemp bool
	// BestEffort runs the command without the floor when the kernel has no Landlock (default: refuse).
	BestEffort bool
}

// DeviceWrites are the places below /dev a shell writes to, always writable under a Floor.
var DeviceWrites = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm",
	"/dev/random", "/dev/urandom"}

// Features is what this kernel offers: for `veto doctor` and for refusing when unsupported.
type Features struct {
	// UserNotif: seccomp user notification with the CONTINUE flag (Linux 5.5+).
	UserNotif bool
	// Landlock is the Landlock ABI version (0: none).
	Landlock int
	// Why says what is missing, "" when nothing is.
	Why string
}

// ErrUnsupported is returned by Run when the kernel lacks what supervision needs (see Probe).
var ErrUnsupported = errors.New("supervise: this system cannot supervise a command")
