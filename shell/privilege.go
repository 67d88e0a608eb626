package shell

// Privilege and leaving the sandbox: commands that gain root or another
// user's rights (sudo, su, doas, pkexec, setuid bits, file capabilities)
// and commands that leave the sandbox (privileged containers, host
// mounts, the host's namespaces, chroot, mount, the container runtime's
// socket). They are findings of RulePrivilege, made before the command's
// own analysis; the command a wrapper runs is still judged.

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// privilegeHandler is the analysis of the privilege wrappers package
// shell knows only for this rule: the command each runs is judged.
func privilegeHandler(name string) func(*walker, *cmd) stage {
	switch name {
	case "pkexec":
		return wrapOpts(optSpec{long: map[string]bool{"user": true}})
	case "run0":
		return wrapOpts(optSpec{val: "ugD", long: map[string]bool{"user": true, "group": true, "chdir": true, "setenv": true,
			"description": true, "slice": true, "property": true, "nice": true, "unit": true, "machine": true, "background": true}})
	case "setpriv":
		return wrapOpts(setprivSpec)
	case "nsenter":
		return wrapOpts(optSpec{val: "tSGwr", long: map[string]bool{"target": true, "setuid": true, "setgid": true, "wd": true, "wdns": true}})
	case "unshare":
		return wrapOpts(optSpec{val: "S", long: map[string]bool{"setuid": true, "setgid": true, "wd": true, "root": true, "propagation": true,
			"map-user": true, "map-group": true, "map-users": true, "map-groups": true, "setgroups": true}})
	case "chroot":
		return wrapChroot
	case "sg":
		return wrapSg
	case "capsh":
		return wrapCapsh
	}
	if loaderName(name) {
		return wrapLoader
	}
	return nil
}

var setprivSpec = optSpec{long: map[string]bool{"reuid": true, "regid": true, "ruid": true, "euid": true, "rgid": true, "egid": true,
	"groups": true, "inh-caps": true, "ambient-caps": true, "bounding-set": true, "securebits": true, "pdeathsig": true,
	"selinux-label": true, "apparmor-profile": true, "landlock-access": true, "landlock-rule": true}}

// loaderName reports whether name is the dynamic loader run as a program
// (ld-linux-x86-64.so.2, ld.so, ld-musl-x86_64.so.1).
func loaderName(name string) bool {
	return name == "ld.so" || (strings.HasPrefix(name, "ld-") || strings.HasPrefix(name, "ld64.")) && strings.Contains(name, ".so")
}

func wrapChroot(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{long: map[string]bool{"userspec": true, "groups": true}}, true)
	if len(o.operands) < 2 {
		return stage{}
	}
	return w.nested(c, o.operands[1:])
}

// astGrep reports whether sg's arguments are ast-grep's (its subcommands
// and options), not the group switcher's.
func astGrep(args []word) bool {
	for i, a := range args {
		if a.unknown {
			continue
		}
		switch a.lit {
		case "run", "scan", "test", "new", "lsp", "completions", "help":
			if i == 0 {
				return true
			}
		case "-p", "--pattern", "-l", "--lang", "-r", "--rewrite", "--json", "-i", "--interactive", "-U", "--update-all", "--rule", "--inline-rules":
			return true
		}
		if strings.HasPrefix(a.lit, "--pattern=") || strings.HasPrefix(a.lit, "--lang=") || strings.HasPrefix(a.lit, "--rewrite=") {
			return true
		}
	}
	return false
}

// wrapSg is sg GROUP [-c] COMMAND: the command is a script for sh. ast-grep
// is also called sg; its arguments are not judged.
func wrapSg(w *walker, c *cmd) stage {
	if astGrep(c.args) {
		return stage{}
	}
	args := c.args
	if len(args) > 0 && !args[0].unknown && strings.HasPrefix(args[0].lit, "-") && args[0].lit != "-c" {
		args = args[1:]
	}
	if len(args) < 2 {
		return stage{}
	}
	script := args[1]
	if !script.unknown && script.lit == "-c" && len(args) > 2 {
		script = args[2]
	}
	return w.scriptOf(c, script)
}

// wrapCapsh is capsh: what follows -- is bash's arguments.
func wrapCapsh(w *walker, c *cmd) stage {
	for i, a := range c.args {
		if !a.unknown && a.lit == "--" {
			return w.nested(c, append([]word{lit("bash")}, c.args[i+1:]...))
		}
	}
	return stage{}
}

// wrapLoader is the dynamic loader run as a program: its options, then the
// program it loads.
func wrapLoader(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{long: map[string]bool{"preload": true, "audit": true, "library-path": true, "argv0": true, "glibc-hwcaps-mask": true, "glibc-hwcaps-prepend": true}}, true)
	if o.has("preload", "audit") {
		w.r.find(RuleInjection, LoaderInjection, c.seg, "The command makes the dynamic loader load a library into the program it runs.")
	}
	return w.nested(c, o.operands)
}

// helpOnly reports whether a privilege program is asked only for its help,
// its version or (sudo -l, -k, -K) what it allows or forgets.
func helpOnly(c *cmd) bool {
	if len(c.args) == 0 {
		return false
	}
	for _, a := range c.args {
		if a.unknown {
			return false
		}
		switch a.lit {
		case "-h", "--help", "-V", "--version":
		case "-l", "--list", "-k", "--reset-timestamp", "-K", "--remove-timestamp":
			if c.name != "sudo" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

const (
	accounts    = "The command changes users, groups or who may act as root."
	kernelCode  = "The command loads code into the kernel or turns its mandatory access control off."
	gainsRoot   = "The command runs with root's or another user's rights."
	setuidBit   = "The command makes a program run with its owner's rights (a setuid bit or file capabilities)."
	leavesBox   = "The command leaves the sandbox: a privileged container, the host's namespaces or mounts, chroot or mount."
	runtimeSock = "The command talks to the container runtime's socket, which gives root on the host."
)

// printers are the calls, by the last part of their name, whose string
// arguments are text shown or logged.
var printers = map[string]bool{"print": true, "println": true, "printf": true, "eprint": true, "eprintln": true, "puts": true,
	"log": true, "info": true, "warn": true, "warning": true, "error": true, "debug": true, "echo": true, "say": true,
	"write": true, "writeln": true, "fatal": true, "die": true, "exception": true}

// printedLiteral reports whether a literal is an argument of a print or
// log call, innermost.
func printedLiteral(calls []codeCall) bool {
	if len(calls) == 0 {
		return false
	}
	name := strings.ToLower(calls[0].name)
	if k := strings.LastIndexAny(name, ".:"); k >= 0 {
		name = name[k+1:]
	}
	return printers[name]
}

// privilege judges c for privilege and sandbox escape.
func (w *walker) privilege(c *cmd) {
	if w.guest {
		// A container's or a VM's rights (docker exec c sudo …, vagrant
		// ssh -c 'sudo …'): not this machine's. sudo over ssh to another
		// host is still refused: root on a server is root.
		return
	}
	if w.code && w.inPrint {
		return
	}
	escalate := func(msg string) { w.r.find(RulePrivilege, PrivilegeEscalation, c.seg, msg) }
	escape := func(msg string) { w.r.find(RulePrivilege, SandboxEscape, c.seg, msg) }
	switch c.name {
	case "sudo", "sudoedit", "doas", "pkexec", "run0", "su", "runuser", "sg", "newgrp", "ksu":
		if c.name == "sg" && astGrep(c.args) {
			return
		}
		if !helpOnly(c) {
			escalate(gainsRoot)
		}
	case "machinectl":
		for _, a := range c.args {
			if !a.unknown && (a.lit == "shell" || a.lit == "login") {
				escalate(gainsRoot)
				break
			}
		}
	case "systemd-run":
		// The system manager runs the unit as root; --user runs it as the user.
		user := false
		for _, a := range c.args {
			if !a.unknown && a.lit == "--user" {
				user = true
			}
		}
		if !user && !helpOnly(c) {
			escalate(gainsRoot)
		}
	case "usermod", "gpasswd", "visudo", "chpasswd", "useradd", "adduser", "groupadd", "addgroup", "newusers", "groupmod":
		if !helpOnly(c) {
			escalate(accounts)
		}
	case "insmod", "modprobe", "kexec":
		o := parseOpts(c.args, optSpec{}, false)
		if !helpOnly(c) && !o.has("n", "dry-run", "c", "showconfig", "D", "show-depends") {
			escape(kernelCode)
		}
	case "setenforce":
		for _, a := range c.args {
			if a.unknown || a.lit == "0" || strings.EqualFold(a.lit, "permissive") {
				escape(kernelCode)
			}
		}
	case "aa-disable", "aa-teardown", "aa-complain":
		escape(kernelCode)
	case "pivot_root", "switch_root":
		escape(leavesBox)
	case "setpriv":
		o := parseOpts(c.args, setprivSpec, true)
		for _, kv := range o.set {
			switch kv.name {
			case "reuid", "regid", "ruid", "euid", "rgid", "egid", "groups", "init-groups", "keep-groups":
				escalate(gainsRoot)
			case "inh-caps", "ambient-caps":
				if strings.Contains(kv.val, "+") {
					escalate(gainsRoot)
				}
			}
		}
	case "capsh":
		for _, a := range c.args {
			if a.unknown {
				continue
			}
			for _, p := range []string{"--uid=", "--gid=", "--groups=", "--user=", "--caps=", "--inh=", "--addamb=", "--iab=", "--secbits="} {
				if strings.HasPrefix(a.lit, p) {
					escalate(gainsRoot)
				}
			}
		}
	case "setcap":
		for _, a := range c.args {
			if !a.unknown && a.lit == "-v" {
				break // it only verifies
			}
			if a.unknown || strings.ContainsAny(a.lit, "+=") {
				escalate(setuidBit)
				break
			}
		}
	case "chmod":
		o := parseOpts(c.args, optSpec{long: map[string]bool{"reference": true}}, false)
		if !o.has("reference") && len(o.operands) > 0 && setuidMode(o.operands[0]) {
			escalate(setuidBit)
		}
	case "install":
		o := parseOpts(c.args, optSpec{val: "mogtS", long: map[string]bool{"mode": true, "owner": true, "group": true, "target-directory": true, "suffix": true}}, false)
		for _, m := range o.all("m", "mode") {
			if setuidMode(m) {
				escalate(setuidBit)
			}
		}
	case "docker", "podman", "nerdctl", "finch", "buildah":
		if w.containerEscapes(c.args) || userNamespace(c.args) {
			escape(leavesBox)
		}
	case "kubectl", "oc":
		if kubeEscapes(c.args) {
			escape(leavesBox)
		}
	case "nsenter", "chroot":
		if !helpOnly(c) {
			escape(leavesBox)
		}
	case "unshare":
		o := parseOpts(c.args, optSpec{val: "S", long: map[string]bool{"map-user": true, "setuid": true}}, true)
		if u, _ := o.get("map-user", "S", "setuid"); o.has("r", "map-root-user") || u == "0" || u == "root" {
			escape(leavesBox)
		}
	case "mount":
		o := parseOpts(c.args, optSpec{val: "otOLUNT", long: map[string]bool{"options": true, "types": true, "test-opts": true,
			"label": true, "uuid": true, "namespace": true, "fstab": true, "target": true, "source": true}}, false)
		if len(o.operands) > 0 || o.has("a", "all", "B", "bind", "R", "rbind", "M", "move", "target", "source", "L", "U", "label", "uuid") {
			escape(leavesBox)
		}
	case "curl", "socat", "nc", "ncat", "netcat":
		for _, a := range c.args {
			for _, v := range a.vals {
				if runtimeSocket(v) {
					escape(runtimeSock)
					return
				}
			}
		}
	}
}

// setuidMode reports whether a chmod or install mode sets the setuid bit:
// u+s, +s, a+s, =s among its clauses, or an octal mode with 4000. The
// setgid bit alone (g+s, 2775), common on shared directories, is not. A
// mode veto cannot see is taken as one that does.
func setuidMode(m word) bool {
	if m.unknown {
		return true
	}
	for _, v := range m.vals {
		if isDigits(v) {
			if len(v) >= 4 && strings.ContainsAny(v[len(v)-4:len(v)-3], "4567") {
				return true
			}
			continue
		}
		for _, clause := range strings.Split(v, ",") {
			i := strings.IndexAny(clause, "+=")
			if i < 0 || !strings.Contains(clause[i:], "s") {
				continue
			}
			if who := clause[:i]; who == "" || strings.ContainsAny(who, "ua") {
				return true
			}
		}
	}
	return false
}

// runtimeSocket reports whether s names a container runtime's socket.
func runtimeSocket(s string) bool {
	for _, sock := range []string{"docker.sock", "containerd.sock", "podman.sock", "crio.sock", "dockershim.sock", "buildkitd.sock"} {
		if strings.Contains(s, sock) {
			return true
		}
	}
	return false
}

// hostPath reports whether a host path handed to a container gives it the
// host: /, the home directory (not what is below it), /home, the system's
// directories (but the few files containers are commonly given, as
// /etc/localtime), or a runtime's socket.
func (w *walker) hostPath(p string) bool {
	if runtimeSocket(p) {
		return true
	}
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") {
		return false // a named volume, or a path relative to the workspace
	}
	home := w.env.Vars["HOME"]
	if p == "~" || p == "~/" || (home != "" && path.Clean(p) == path.Clean(home)) {
		return true
	}
	p = path.Clean(p)
	if p == "/" {
		return true
	}
	switch p {
	case "/home", "/Users":
		return true
	case "/etc/localtime", "/etc/timezone", "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/resolv.conf", "/etc/machine-id",
		"/etc/ssl/certs", "/etc/ca-certificates", "/etc/pki/ca-trust", "/usr/share/zoneinfo", "/dev/shm", "/dev/null", "/dev/fuse":
		return false // files containers are commonly given, read for the time, users or certificates
	}
	for _, d := range []string{"/etc", "/root", "/proc", "/sys", "/dev", "/boot", "/run", "/var/run", "/var/lib/docker", "/usr", "/bin",
		"/sbin", "/lib", "/lib64", "/lib32", "/var/lib/kubelet", "/var/lib/containerd"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// dockerValued are the long options of docker, podman and nerdctl's run,
// create and exec that take a value; dockerShortValued the short ones.
var dockerValued = map[string]bool{"add-host": true, "annotation": true, "attach": true, "cap-add": true, "cap-drop": true,
	"cgroup-parent": true, "cgroupns": true, "cidfile": true, "cpus": true, "cpuset-cpus": true, "cpuset-mems": true, "cpu-shares": true,
	"cpu-period": true, "cpu-quota": true, "device": true, "device-cgroup-rule": true, "dns": true, "dns-option": true, "dns-search": true,
	"domainname": true, "entrypoint": true, "env": true, "env-file": true, "expose": true, "gpus": true, "group-add": true,
	"health-cmd": true, "health-interval": true, "health-retries": true, "health-timeout": true, "health-start-period": true,
	"hostname": true, "ip": true, "ip6": true, "ipc": true, "isolation": true, "label": true, "label-file": true, "link": true,
	"log-driver": true, "log-opt": true, "mac-address": true, "memory": true, "memory-swap": true, "memory-reservation": true,
	"mount": true, "name": true, "network": true, "net": true, "network-alias": true, "oom-score-adj": true, "pid": true,
	"pids-limit": true, "platform": true, "publish": true, "pull": true, "restart": true, "runtime": true, "security-opt": true,
	"shm-size": true, "stop-signal": true, "stop-timeout": true, "storage-opt": true, "sysctl": true, "tmpfs": true, "ulimit": true,
	"user": true, "userns": true, "uts": true, "volume": true, "volume-driver": true, "volumes-from": true, "workdir": true,
	"detach-keys": true, "uidmap": true, "gidmap": true, "subuidname": true, "subgidname": true, "arch": true, "os": true,
	"variant": true, "pod": true, "secret": true, "hooks-dir": true, "image-volume": true, "tz": true, "umask": true, "chdir": true,
	"blkio-weight": true, "kernel-memory": true, "memory-swappiness": true, "health-start-interval": true}

const dockerShortValued = "aceEhlmpuvw"

// dockerDefaultCaps are the capabilities a container has anyway: adding
// one back gives it nothing.
var dockerDefaultCaps = map[string]bool{"CHOWN": true, "DAC_OVERRIDE": true, "FSETID": true, "FOWNER": true, "MKNOD": true,
	"NET_RAW": true, "SETGID": true, "SETUID": true, "SETFCAP": true, "SETPCAP": true, "NET_BIND_SERVICE": true, "SYS_CHROOT": true,
	"KILL": true, "AUDIT_WRITE": true}

// containerEscapes reports whether a docker, podman or nerdctl command
// runs a container that reaches the host: --privileged, a host path or
// the runtime's socket mounted, the host's pid, ipc, uts, user or cgroup
// namespace, a capability beyond the default ones, a disk or memory
// device, or its security profile turned off.
func (w *walker) containerEscapes(args []word) bool {
	// Global options, then the subcommand.
	for len(args) > 0 && !args[0].unknown && strings.HasPrefix(args[0].lit, "-") {
		switch args[0].lit {
		case "-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey", "--url", "--connection", "--root", "--runroot":
			if len(args) > 1 {
				args = args[1:]
			}
		}
		args = args[1:]
	}
	if len(args) == 0 || args[0].unknown {
		return false
	}
	sub := args[0].lit
	args = args[1:]
	if sub == "container" && len(args) > 0 {
		sub, args = args[0].lit, args[1:]
	}
	if sub != "run" && sub != "create" && sub != "exec" {
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.unknown {
			if i > 0 && !args[i-1].unknown && (args[i-1].lit == "-v" || args[i-1].lit == "--volume" || args[i-1].lit == "--mount") && !pwdWord(a) {
				return true // a mount whose source veto cannot see
			}
			continue
		}
		s := a.lit
		if !strings.HasPrefix(s, "-") && (isDigits(s) || strings.Contains(s, "=")) {
			continue // the value of an option veto does not know: no image is spelled so
		}
		if s == "--" || !strings.HasPrefix(s, "-") || s == "-" {
			return false // the image: what follows is the container's command
		}
		var name string
		var val word
		if strings.HasPrefix(s, "--") {
			n, _, has := strings.Cut(s[2:], "=")
			name = n
			switch {
			case has:
				val = tails(a, "--"+n+"=")
			case dockerValued[n] && i+1 < len(args):
				i++
				val = args[i]
			case n == "privileged":
				return true
			default:
				continue
			}
		} else {
			// A cluster of short options: the first that takes a value ends it.
			found := false
			for j := 1; j < len(s); j++ {
				if strings.IndexByte(dockerShortValued, s[j]) >= 0 {
					name = map[byte]string{'v': "volume", 'e': "env", 'u': "user", 'p': "publish", 'w': "workdir", 'h': "hostname",
						'l': "label", 'm': "memory", 'a': "attach", 'c': "cpu-shares", 'E': "env"}[s[j]]
					if j+1 < len(s) {
						val = tails(a, s[:j+1])
					} else if i+1 < len(args) {
						i++
						val = args[i]
					}
					found = true
					break
				}
			}
			if !found {
				continue
			}
		}
		if val.unknown {
			if (name == "volume" || name == "mount") && !pwdWord(val) {
				return true
			}
			continue
		}
		for _, v := range val.vals {
			switch name {
			case "privileged":
				if v != "false" {
					return true
				}
			case "volume":
				src, _, _ := strings.Cut(v, ":")
				if w.hostPath(src) {
					return true
				}
				w.mountRead(src)
			case "mount":
				for _, kv := range strings.Split(v, ",") {
					k, x, _ := strings.Cut(kv, "=")
					if (k == "source" || k == "src") && w.hostPath(x) {
						return true
					}
					if k == "source" || k == "src" {
						w.mountRead(x)
					}
				}
			case "pid", "ipc", "uts", "userns", "cgroupns":
				if v == "host" {
					return true
				}
			case "cap-add":
				for _, cp := range strings.Split(v, ",") {
					if !dockerDefaultCaps[strings.TrimPrefix(strings.ToUpper(cp), "CAP_")] {
						return true
					}
				}
			case "device":
				dev, _, _ := strings.Cut(v, ":")
				if blockDevice(dev) || dev == "/dev/mem" || dev == "/dev/kmem" || dev == "/dev/port" {
					return true
				}
			case "security-opt":
				if strings.Contains(v, "unconfined") || strings.Contains(v, "disable") || v == "no-new-privileges=false" || v == "no-new-privileges:false" {
					return true
				}
			}
		}
	}
	return false
}

// mountRead records a host directory handed to a container as a read of
// everything below it, for the file rules: a container given ~/.aws reads
// the credentials in it.
func (w *walker) mountRead(src string) {
	if strings.HasPrefix(src, "/") || strings.HasPrefix(src, "~") || strings.HasPrefix(src, ".") {
		w.readTree(lit(src))
	}
}

// userNamespace reports whether podman or buildah is asked to run a
// command as root of a user namespace (podman unshare).
func userNamespace(args []word) bool {
	for _, a := range args {
		if a.unknown {
			return false
		}
		if !strings.HasPrefix(a.lit, "-") {
			return a.lit == "unshare"
		}
	}
	return false
}

// hostRootPath reports whether a path reaches another process's root or
// working directory through /proc (/proc/1/root/etc/shadow), the way out
// of a container that shares the host's processes.
func hostRootPath(p string) bool {
	rest, ok := strings.CutPrefix(path.Clean(p), "/proc/")
	if !ok {
		return false
	}
	_, sub, _ := strings.Cut(rest, "/")
	return sub == "root" || sub == "cwd" || strings.HasPrefix(sub, "root/") || strings.HasPrefix(sub, "cwd/")
}

// procRoots finds, once the analysis is done, the paths that go through
// another process's root.
func (w *walker) procRoots() {
	for _, f := range w.r.Files {
		if hostRootPath(f.Path) || f.Unknown && hostRootPath(f.Pattern) {
			w.r.find(RulePrivilege, SandboxEscape, f.Segment, leavesBox)
		}
	}
}

// pwdWord reports whether a word veto cannot evaluate is the working
// directory's name, $(pwd) or `pwd`, with a literal tail (":/src").
func pwdWord(x word) bool {
	if x.src == nil || len(x.src.Parts) == 0 {
		return false
	}
	parts := x.src.Parts
	if dq, ok := parts[0].(*syntax.DblQuoted); ok && len(parts) == 1 {
		parts = dq.Parts
	} else if ok {
		parts = append(append([]syntax.WordPart(nil), dq.Parts...), parts[1:]...)
	}
	cs, ok := parts[0].(*syntax.CmdSubst)
	if !ok || len(cs.Stmts) != 1 {
		return false
	}
	call, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 1 || call.Args[0].Lit() != "pwd" {
		return false
	}
	for _, p := range parts[1:] {
		switch q := p.(type) {
		case *syntax.Lit:
		case *syntax.DblQuoted:
			for _, r := range q.Parts {
				if _, ok := r.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// kubeEscapes reports whether a kubectl or oc command reaches a node: a
// debug container on a node or with the sysadmin profile, or a pod run
// privileged or with the host's namespaces or paths.
func kubeEscapes(args []word) bool {
	debug, run, prev := false, false, ""
	for _, a := range args {
		if a.unknown {
			continue
		}
		s := a.lit
		if prev == "--overrides" || prev == "--profile" {
			s = prev + "=" + s
		}
		prev = a.lit
		switch {
		case s == "debug":
			debug = true
		case s == "run":
			run = true
		case debug && (strings.HasPrefix(s, "node/") || strings.HasPrefix(s, "nodes/")):
			return true
		case debug && (strings.HasPrefix(s, "--profile=sysadmin") || strings.HasPrefix(s, "--profile=netadmin")):
			return true
		case run && (s == "--privileged" || s == "--privileged=true"):
			return true
		case strings.HasPrefix(s, "--overrides="):
			for _, k := range []string{"privileged", "hostPID", "hostNetwork", "hostIPC", "hostPath"} {
				if strings.Contains(s, k) {
					return true
				}
			}
		}
	}
	return false
}
