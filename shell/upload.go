package shell

// Uploads and installs: where a command sends local data (files it names,
// or what a pipeline or a redirection gives it), and where a package
// manager installs from when that is not its ecosystem's registry, or is
// redirected to another registry. The analyzer records them; the rules
// decide by the egress allow-list.

import (
	"strings"
)

// InstallKind is what an Install is.
type InstallKind string

// The kinds of Install.
const (
	// InstallSource is a package installed from a URL, a git remote, or a
	// file or directory (Path) rather than from the ecosystem's registry.
	InstallSource InstallKind = "source"
	// InstallRedirect is a registry or index other than the ecosystem's:
	// an option of the install, a config setting, an environment variable,
	// a registry line written to a config file.
	InstallRedirect InstallKind = "redirect"
	// InstallScript is an install-time script (preinstall, install,
	// postinstall, prepare) added to package.json.
	InstallScript InstallKind = "script"
)

// Install is one source or registry a package manager installs from that
// is not plainly its registry, or an install-time script added.
type Install struct {
	Kind    InstallKind
	Host    string `json:",omitempty"` // the host installed from; "" for a path, a script, or when Unknown
	Path    string `json:",omitempty"` // a local file or directory installed from, as written (variables expanded)
	Dir     string `json:",omitempty"` // the directory Path is relative to
	Unknown bool   `json:",omitempty"` // the source or registry cannot be known statically
	Command string
	Segment int
}

// localInput reports whether what c reads on standard input is local data:
// a file, or the output of a local command, rather than literal text the
// command spells out, nothing, or a download.
func localInput(c *cmd) bool {
	if len(c.up) == 0 {
		return false
	}
	in := c.up[len(c.up)-1]
	if in.fetch {
		return false
	}
	if in.text != nil && !in.decode {
		return false
	}
	return true
}

// uploadFrom records the hosts c recorded from index from on as places it
// sends local data to.
func (w *walker) uploadFrom(c *cmd, from int) {
	if w.code || w.remote {
		return
	}
	for _, h := range w.r.Hosts[from:] {
		if h.Segment == c.seg {
			w.r.Uploads = append(w.r.Uploads, h)
		}
	}
}

// uploadTo records a destination c sends local data to without reaching it
// as a host the egress rule judges (a bucket, a storage account).
func (w *walker) uploadTo(c *cmd, host string, unknown bool) {
	if w.code || w.remote {
		return
	}
	w.r.Uploads = append(w.r.Uploads, Host{Host: host, Unknown: unknown || host == "", Command: c.name, Segment: c.seg})
}

func (w *walker) install(c *cmd, kind InstallKind, x word) {
	if x.unknown {
		w.r.Installs = append(w.r.Installs, Install{Kind: kind, Unknown: true, Command: c.name, Segment: c.seg})
		return
	}
	for _, v := range x.vals {
		w.installValue(c, kind, v)
	}
}

func (w *walker) installValue(c *cmd, kind InstallKind, v string) {
	in := Install{Kind: kind, Command: c.name, Segment: c.seg}
	if p, ok := strings.CutPrefix(v, "file:"); ok && kind == InstallSource {
		if rest, ok := strings.CutPrefix(p, "//"); ok {
			p = rest
		}
		in.Path, in.Dir = p, w.cwd
		if p == "" {
			in.Path = "."
		}
	} else if h, ok := hostOf(strings.TrimPrefix(v, "git+")); ok && strings.Contains(v, ":") {
		in.Host = h
	} else if kind == InstallSource && v != "" {
		in.Path, in.Dir = v, w.cwd
	} else {
		in.Unknown = true
	}
	w.r.Installs = append(w.r.Installs, in)
}

// runCurlUpload says whether curl, with options o, sends local data.
func curlSends(c *cmd, o *opts) bool {
	stdin := localInput(c)
	for _, x := range o.all("d", "data", "data-binary", "data-ascii", "json", "data-urlencode") {
		if x.unknown {
			return true
		}
		for _, v := range x.vals {
			i := strings.IndexByte(v, '@')
			if i < 0 || strings.Contains(v[:i], "=") {
				continue
			}
			if v[i+1:] != "-" || stdin {
				return true
			}
		}
	}
	for _, x := range o.all("F", "form") {
		if x.unknown {
			return true
		}
		for _, v := range x.vals {
			if _, f, ok := strings.Cut(v, "=@"); ok && (f != "-" || stdin) {
				return true
			}
			if _, f, ok := strings.Cut(v, "=<"); ok && (f != "-" || stdin) {
				return true
			}
		}
	}
	for _, x := range o.all("T", "upload-file") {
		if x.unknown || (x.lit != "-" && x.lit != ".") || stdin {
			return true
		}
	}
	if stdin {
		if m, ok := o.get("X", "request"); ok && (strings.EqualFold(m, "POST") || strings.EqualFold(m, "PUT") || strings.EqualFold(m, "PATCH")) {
			return true
		}
	}
	return false
}

// runStreamUpload is a raw connection (nc, telnet, ssh, …) fed local data:
// the hosts it recorded receive it.
func (w *walker) streamUpload(c *cmd, from int) {
	if localInput(c) {
		w.uploadFrom(c, from)
	}
}

// wrapUpload runs h, then records the hosts it reached as uploads when c
// is fed local data.
func wrapUpload(h func(*walker, *cmd) stage) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		from := len(w.r.Hosts)
		st := h(w, c)
		w.streamUpload(c, from)
		return st
	}
}

// runOpensslNet is openssl: s_client reaches -connect's host, and sends
// its input there.
func runOpensslNet(w *walker, c *cmd) stage {
	if len(c.args) == 0 || c.args[0].lit != "s_client" {
		return runOpenssl(w, c)
	}
	from := len(w.r.Hosts)
	for i, a := range c.args {
		if (a.lit == "-connect" || a.lit == "-proxy") && i+1 < len(c.args) {
			w.hostWord(c, c.args[i+1])
		}
	}
	w.streamUpload(c, from)
	return stage{}
}

// runAws is the AWS CLI: s3 cp, mv and sync from a local path to s3://
// send local files to the bucket.
func runAws(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{long: map[string]bool{"profile": true, "region": true, "endpoint-url": true, "exclude": true,
		"include": true, "acl": true, "storage-class": true, "sse": true, "content-type": true, "cache-control": true, "expires": true,
		"output": true, "query": true, "grants": true, "metadata": true, "bucket": true, "key": true, "body": true, "upload-id": true,
		"part-number": true}}, false)
	ops := o.operands
	if len(ops) >= 2 && ops[0].lit == "s3api" && (ops[1].lit == "put-object" || ops[1].lit == "upload-part") && o.has("body") {
		b := o.all("bucket")
		switch {
		case o.has("endpoint-url"):
			url, _ := o.lookup("endpoint-url")
			h, ok := hostOf(url)
			w.uploadTo(c, h, !ok || o.all("endpoint-url")[0].unknown)
		case len(b) == 0 || b[0].unknown:
			w.uploadTo(c, "", true)
		default:
			w.uploadTo(c, bucketHost(b[0].lit, "", ".s3.amazonaws.com"), false)
		}
		return stage{}
	}
	if len(ops) < 4 || ops[0].lit != "s3" {
		return stage{}
	}
	switch ops[1].lit {
	case "cp", "mv", "sync":
	default:
		return stage{}
	}
	src, dst := ops[2], ops[len(ops)-1]
	if src.lit == "-" && !src.unknown && !localInput(c) {
		return stage{} // literal text, or nothing, on the input
	}
	if !src.unknown && strings.HasPrefix(src.lit, "s3://") {
		return stage{}
	}
	if dst.unknown || !strings.HasPrefix(dst.lit, "s3://") {
		if dst.unknown {
			w.uploadTo(c, "", true)
		}
		return stage{}
	}
	if ep, ok := o.get("endpoint-url"); ok {
		h, ok := hostOf(ep)
		w.uploadTo(c, h, !ok || o.all("endpoint-url")[0].unknown)
		return stage{}
	}
	w.uploadTo(c, bucketHost(dst.lit, "s3://", ".s3.amazonaws.com"), false)
	return stage{}
}

// bucketHost is the host a bucket URL names: "BUCKET" + suffix.
func bucketHost(u, scheme, suffix string) string {
	b := strings.TrimPrefix(u, scheme)
	if i := strings.IndexByte(b, '/'); i >= 0 {
		b = b[:i]
	}
	if b == "" {
		return ""
	}
	return strings.ToLower(b) + suffix
}

// runGsutil is gsutil and gcloud storage: cp, mv and rsync to gs://.
func runGsutil(w *walker, c *cmd) stage {
	args := c.args
	if c.name == "gcloud" {
		if len(args) < 2 || args[0].lit != "storage" {
			return stage{}
		}
		args = args[1:]
	}
	o := parseOpts(args, optSpec{val: "hopuz", long: map[string]bool{"project": true}}, false)
	ops := o.operands
	if len(ops) < 3 {
		return stage{}
	}
	switch ops[0].lit {
	case "cp", "mv", "rsync":
	default:
		return stage{}
	}
	dst := ops[len(ops)-1]
	local := false
	for _, s := range ops[1 : len(ops)-1] {
		if s.unknown || !strings.HasPrefix(s.lit, "gs://") {
			local = true
		}
	}
	if !local {
		return stage{}
	}
	switch {
	case dst.unknown:
		w.uploadTo(c, "", true)
	case strings.HasPrefix(dst.lit, "gs://"):
		w.uploadTo(c, bucketHost(dst.lit, "gs://", ".storage.googleapis.com"), false)
	}
	return stage{}
}

// runAz is the Azure CLI: storage … upload and upload-batch send local
// files to the account's blob host.
func runAz(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{long: map[string]bool{"account-name": true, "container-name": true, "file": true, "name": true,
		"source": true, "destination": true, "connection-string": true, "account-key": true, "sas-token": true, "blob-url": true, "path": true,
		"share-name": true, "subscription": true, "output": true, "query": true, "pattern": true}}, false)
	if len(o.operands) < 2 || o.operands[0].lit != "storage" {
		return stage{}
	}
	up := false
	for _, x := range o.operands[1:] {
		if x.unknown || strings.HasPrefix(x.lit, "upload") {
			up = true
		}
	}
	if !up {
		return stage{}
	}
	acct := o.all("account-name")
	if len(acct) == 0 || acct[0].unknown {
		w.uploadTo(c, "", true)
		return stage{}
	}
	w.uploadTo(c, strings.ToLower(acct[0].lit)+".blob.core.windows.net", false)
	return stage{}
}

// runRclone is rclone: copy, sync, move, copyto and moveto from a local
// path to a remote ("name:path") send local files to a remote veto
// cannot name a host for.
func runRclone(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{long: map[string]bool{"config": true, "exclude": true, "include": true, "filter": true,
		"transfers": true, "checkers": true, "log-file": true, "log-level": true, "bwlimit": true}}, false)
	ops := o.operands
	if len(ops) < 3 {
		return stage{}
	}
	switch ops[0].lit {
	case "copy", "sync", "move", "copyto", "moveto", "rcat":
	default:
		return stage{}
	}
	remote := func(x word) bool {
		return x.unknown || (remoteSpec(x.lit) && !strings.HasPrefix(x.lit, "/"))
	}
	if !remote(ops[len(ops)-1]) {
		return stage{}
	}
	for _, s := range ops[1 : len(ops)-1] {
		if s.unknown || !remoteSpec(s.lit) {
			w.uploadTo(c, "", true)
			return stage{}
		}
	}
	return stage{}
}

// runGh is GitHub's CLI: gist create and edit send local files (or the
// input) to the gist host.
func runGh(w *walker, c *cmd) stage {
	if len(c.args) >= 2 && c.args[0].lit == "gist" && (c.args[1].lit == "create" || c.args[1].lit == "edit" || c.args[1].lit == "new") {
		w.uploadTo(c, "gist.github.com", false)
	}
	return stage{}
}

// gitRemoteURL is what a push's remote operand names: a URL or scp-form
// address, or a remote the same command added.
func (w *walker) gitPushUpload(c *cmd, rest []word) {
	g := parseGit(rest, "o", map[string]bool{"push-option": true, "repo": true, "receive-pack": true, "exec": true}, nil)
	remote := ""
	for i, a := range rest {
		if v, ok := strings.CutPrefix(a.lit, "--repo="); ok {
			remote = v
		} else if a.lit == "--repo" && i+1 < len(rest) {
			remote = rest[i+1].lit
		}
	}
	if remote != "" {
	} else if len(g.positional) > 0 {
		remote = g.positional[0]
	} else {
		remote = "origin"
	}
	if remote == "" && g.unknown && len(g.positional) > 0 {
		w.uploadTo(c, "", true) // the remote is an expansion veto cannot see
		return
	}
	if _, ok := w.remotes[rewritten]; ok {
		w.uploadTo(c, "", true)
		return
	}
	if u, ok := w.remotes[remote]; ok {
		if u == "" {
			w.uploadTo(c, "", true)
			return
		}
		remote = u
	}
	if isRemoteURL(remote) {
		h, ok := hostOf(remote)
		w.uploadTo(c, h, !ok)
		return
	}
	if strings.HasPrefix(remote, "/") || strings.HasPrefix(remote, ".") {
		return // a repository on this machine
	}
}

// rewritten is the key of walker.remotes that says remote URLs were
// rewritten (url.*.insteadOf) earlier in the command.
const rewritten = "\x00rewritten"

// isRemoteURL reports whether a git remote operand is a URL or an
// scp-form address rather than a remote's name.
func isRemoteURL(s string) bool {
	if strings.Contains(s, "://") {
		return true
	}
	i := strings.IndexByte(s, ':')
	return i > 0 && !strings.ContainsRune(s[:i], '/')
}

// gitRemoteAdd records the URL a command gives a remote (git remote add
// NAME URL, git remote set-url NAME URL), for a later push in the same
// command.
func (w *walker) gitRemoteAdd(rest []word) {
	var pos []word
	for i := 1; i < len(rest); i++ {
		a := rest[i]
		if strings.HasPrefix(a.lit, "-") && !a.unknown {
			if a.lit == "-t" || a.lit == "-m" {
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	if len(pos) < 2 {
		return
	}
	if w.remotes == nil {
		w.remotes = map[string]string{}
	}
	name, url := pos[0], pos[len(pos)-1]
	if name.unknown {
		return
	}
	if url.unknown {
		w.remotes[name.lit] = ""
		return
	}
	w.remotes[name.lit] = url.lit
}

// gitConfigRemote records a remote's URL set with git config
// remote.NAME.url (or pushurl) VALUE, for a later push in the same command.
func (w *walker) gitConfigRemote(rest []word) {
	var pos []word
	for _, a := range rest {
		if a.unknown || !strings.HasPrefix(a.lit, "-") {
			pos = append(pos, a)
		}
	}
	if len(pos) > 0 && pos[0].lit == "set" {
		pos = pos[1:]
	}
	if len(pos) < 2 || pos[0].unknown {
		return
	}
	key, lower := pos[0].lit, strings.ToLower(pos[0].lit)
	if strings.HasPrefix(lower, "url.") && (strings.HasSuffix(lower, ".insteadof") || strings.HasSuffix(lower, ".pushinsteadof")) {
		// A rewrite of remote URLs: a later push may go anywhere.
		if w.remotes == nil {
			w.remotes = map[string]string{}
		}
		w.remotes[rewritten] = ""
		return
	}
	if !strings.HasPrefix(lower, "remote.") {
		return
	}
	var name string
	switch {
	case strings.HasSuffix(lower, ".pushurl") && len(key) > len("remote..pushurl"):
		name = key[len("remote.") : len(key)-len(".pushurl")]
	case strings.HasSuffix(lower, ".url") && len(key) > len("remote..url"):
		name = key[len("remote.") : len(key)-len(".url")]
	default:
		return
	}
	if w.remotes == nil {
		w.remotes = map[string]string{}
	}
	if pos[1].unknown {
		w.remotes[name] = ""
		return
	}
	w.remotes[name] = pos[1].lit
}
