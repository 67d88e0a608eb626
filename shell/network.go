package shell

// Network: the hosts curl, wget, nc, socat, ssh, scp, rsync, telnet,
// ftp, package managers and proxy variables reach.

import (
	"net/url"
	"strings"
)

// host records the destination of a URL or host word.
func (w *walker) host(c *cmd, s string) {
	h, ok := hostOf(s)
	if !ok {
		w.r.Hosts = append(w.r.Hosts, Host{Unknown: true, Command: c.name, Segment: c.seg})
		return
	}
	w.r.Hosts = append(w.r.Hosts, Host{Host: h, Command: c.name, Segment: c.seg})
}

// optHosts takes every value given to the options names as a host the
// command reaches.
func (w *walker) optHosts(c *cmd, o *opts, names ...string) {
	for _, x := range o.all(names...) {
		w.hostWord(c, x)
	}
}

func (w *walker) hostWord(c *cmd, x word) {
	if x.unknown {
		w.r.Hosts = append(w.r.Hosts, Host{Unknown: true, Command: c.name, Segment: c.seg})
		return
	}
	for _, v := range x.vals {
		w.host(c, v)
	}
}

// hostOf extracts the host of a URL, "user@host:path", "host:port" or a
// bare host name. It does not normalise; the egress rule does.
func hostOf(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	if i := strings.Index(s, "://"); i > 0 {
		u, err := url.Parse(s)
		if err != nil {
			// Fall back to what sits between the scheme and the path.
			rest := s[i+3:]
			if j := strings.IndexAny(rest, "/?#"); j >= 0 {
				rest = rest[:j]
			}
			if k := strings.LastIndexByte(rest, '@'); k >= 0 {
				rest = rest[k+1:]
			}
			return rest, rest != ""
		}
		return u.Hostname(), u.Hostname() != ""
	}
	if k := strings.LastIndexByte(s, '@'); k >= 0 {
		s = s[k+1:]
	}
	if strings.HasPrefix(s, "[") {
		if j := strings.IndexByte(s, ']'); j > 0 {
			return s[:j+1], true
		}
	}
	if j := strings.IndexByte(s, ':'); j >= 0 && strings.Count(s, ":") == 1 {
		s = s[:j]
	}
	if j := strings.IndexByte(s, '/'); j >= 0 {
		s = s[:j]
	}
	return s, s != ""
}

// envHosts records hosts named by variables that steer downloads.
func (w *walker) envHosts(name string, x word) {
	switch name {
	case "GOPROXY", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "npm_config_registry", "NPM_CONFIG_REGISTRY", "UV_INDEX_URL", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY":
	default:
		return
	}
	c := &cmd{name: name, seg: w.r.Segments}
	if x.unknown {
		w.hostWord(c, x)
		return
	}
	for _, v := range x.vals {
		for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' }) {
			if part == "direct" || part == "off" {
				continue
			}
			w.host(c, part)
		}
	}
}

var curlValued = map[string]bool{"output": true, "data": true, "data-binary": true, "data-raw": true, "data-urlencode": true,
	"data-ascii": true, "json": true, "form": true, "form-string": true, "upload-file": true, "header": true, "user-agent": true,
	"referer": true, "user": true, "request": true, "cookie": true, "cookie-jar": true, "dump-header": true, "trace": true,
	"trace-ascii": true, "stderr": true, "config": true, "proxy": true, "cert": true, "key": true, "cacert": true, "capath": true,
	"url": true, "max-time": true, "connect-timeout": true, "retry": true, "write-out": true, "resolve": true, "connect-to": true,
	"netrc-file": true, "output-dir": true, "range": true, "interface": true, "local-port": true, "oauth2-bearer": true,
	"socks5": true, "socks5-hostname": true, "preproxy": true, "proxy-user": true, "limit-rate": true, "max-filesize": true,
	"continue-at": true, "time-cond": true, "variable": true, "expand-url": true}

func runCurl(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "odTFHAeuXbcDKxECrmyYzw", long: curlValued}, false)
	// Every value of a repeated option counts: curl sends every -d and
	// writes every -o.
	w.optFiles(&o, true, notStdio, "o", "output", "D", "dump-header", "c", "cookie-jar", "trace", "trace-ascii", "stderr")
	for _, f := range o.all("o", "output") {
		w.wrote(f, nil, false, true) // a download, run later or not
	}
	at := func(v string) (string, bool) { // @file, but not @- (standard input)
		return strings.TrimPrefix(v, "@"), strings.HasPrefix(v, "@") && v != "@-"
	}
	w.optFiles(&o, false, at, "d", "data", "data-binary", "data-ascii", "json", "H", "header")
	w.optFiles(&o, false, func(v string) (string, bool) { // @file or name@file, not name=content
		i := strings.IndexByte(v, '@')
		return v[i+1:], i >= 0 && !strings.Contains(v[:i], "=") && v[i+1:] != "-"
	}, "data-urlencode")
	w.optFiles(&o, false, func(v string) (string, bool) {
		if _, f, found := strings.Cut(v, "=@"); found {
			return strings.SplitN(f, ";", 2)[0], true
		}
		_, f, found := strings.Cut(v, "=<")
		return f, found
	}, "F", "form")
	w.optFiles(&o, false, func(v string) (string, bool) { return v, v != "-" && v != "." && v != "" },
		"T", "upload-file", "K", "config", "netrc-file")
	w.optFiles(&o, false, func(v string) (string, bool) { return v, v != "" && v != "-" && !strings.Contains(v, "=") },
		"b", "cookie") // a cookie file; name=value is a cookie
	w.optHosts(c, &o, "x", "proxy", "preproxy", "socks5", "socks5-hostname", "url")
	for _, u := range o.operands {
		w.hostWord(c, u)
	}
	if o.has("O", "remote-name", "remote-name-all") {
		w.wroteDownloads(o.operands)
	}
	return stage{}
}

func runWget(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "OoaPiUeTtlQwYAR", long: map[string]bool{"output-document": true, "output-file": true,
		"append-output": true, "directory-prefix": true, "input-file": true, "post-file": true, "body-file": true, "post-data": true,
		"user-agent": true, "header": true, "execute": true, "tries": true, "timeout": true, "level": true, "user": true,
		"password": true, "http-user": true, "http-password": true, "load-cookies": true, "save-cookies": true, "referer": true}}, false)
	w.optFiles(&o, true, notStdio, "O", "output-document", "o", "output-file", "a", "append-output", "save-cookies")
	for _, f := range o.all("O", "output-document") {
		w.wrote(f, nil, false, true)
	}
	w.optFiles(&o, true, nil, "P", "directory-prefix")
	w.optFiles(&o, false, notStdio, "post-file", "body-file", "load-cookies")
	if o.has("i", "input-file") {
		w.optFiles(&o, false, notStdio, "i", "input-file")
		w.r.Hosts = append(w.r.Hosts, Host{Unknown: true, Command: c.name, Segment: c.seg})
	}
	for _, u := range o.operands {
		w.hostWord(c, u)
	}
	if !o.has("O", "output-document") {
		w.wroteDownloads(o.operands)
	}
	return stage{}
}

func runNetcat(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "psxwiqXTOMGgIecP", long: map[string]bool{"proxy": true, "source": true, "exec": true, "sh-exec": true, "wait": true}}, false)
	if o.has("l", "listen") {
		return stage{}
	}
	w.optHosts(c, &o, "x", "proxy")
	for _, x := range o.all("e", "c", "exec", "sh-exec") {
		w.scriptOf(c, x)
	}
	if len(o.operands) > 0 {
		w.hostWord(c, o.operands[0])
	}
	return stage{}
}

func runSocat(w *walker, c *cmd) stage {
	for _, a := range c.args {
		if a.unknown {
			w.r.Hosts = append(w.r.Hosts, Host{Unknown: true, Command: c.name, Segment: c.seg})
			continue
		}
		kind, rest, ok := strings.Cut(a.lit, ":")
		if !ok {
			continue
		}
		switch strings.ToUpper(kind) {
		case "TCP", "TCP4", "TCP6", "UDP", "UDP4", "UDP6", "OPENSSL", "SSL", "SCTP", "DCCP", "UDP-SENDTO", "TCP-CONNECT", "SOCKS4", "SOCKS4A", "SOCKS5", "PROXY":
			host := rest
			if i := strings.IndexAny(host, ":,"); i >= 0 {
				host = host[:i]
			}
			w.host(c, host)
		case "EXEC", "SYSTEM":
			w.scriptOf(c, lit(strings.SplitN(rest, ",", 2)[0]))
		}
	}
	return stage{}
}

func runFirstHost(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "lpbenS"}, false)
	if len(o.operands) > 0 {
		w.hostWord(c, o.operands[0])
	}
	return stage{}
}

var sshValued = optSpec{val: "bcDEeFIiJLlmOoPpQRSWwB"}

// runSSH reaches a host and runs a command there: the command is judged
// strictly, and its paths are the remote machine's, not ours.
func runSSH(w *walker, c *cmd) stage {
	o := parseOpts(c.args, sshValued, true)
	if len(o.operands) == 0 {
		return stage{}
	}
	w.hostWord(c, o.operands[0])
	w.optHosts(c, &o, "J")
	if len(o.operands) > 1 {
		remote := joinWords(o.operands[1:])
		sub := w.fork()
		sub.remote, sub.strict = true, true
		sub.scriptOf(c, remote)
	}
	return stage{}
}

// runRemoteCopy is scp, sftp and rsync: "host:path" operands reach a host;
// local operands are read, and the last one written.
func runRemoteCopy(w *walker, c *cmd) stage {
	short := "PiFolcJSeBfT" // scp's and sftp's options that take a value
	if c.name == "rsync" {
		short = "eBfTM" // rsync's -P, -i, -l, -o, -c, -S and -F are flags
	}
	o := parseOpts(c.args, optSpec{val: short, long: map[string]bool{"rsh": true, "rsync-path": true, "filter": true,
		"exclude": true, "include": true, "exclude-from": true, "include-from": true, "files-from": true, "port": true,
		"password-file": true, "temp-dir": true, "log-file": true, "partial-dir": true, "backup-dir": true, "suffix": true,
		"chmod": true, "chown": true, "timeout": true, "bwlimit": true, "compare-dest": true, "copy-dest": true, "link-dest": true}}, false)
	for i, x := range o.operands {
		if x.unknown {
			w.hostWord(c, x)
			continue
		}
		if remoteSpec(x.lit) {
			w.host(c, x.lit)
			continue
		}
		if c.name == "sftp" {
			w.hostWord(c, x)
			continue
		}
		last := i == len(o.operands)-1 && len(o.operands) > 1
		if !last && o.has("r", "a", "recursive", "archive") {
			w.readTree(x)
			continue
		}
		w.access(x, last, false)
	}
	return stage{}
}

// remoteSpec reports whether an scp or rsync operand names a remote file.
func remoteSpec(s string) bool {
	if strings.Contains(s, "://") {
		return true
	}
	i := strings.IndexByte(s, ':')
	return i > 0 && !strings.ContainsRune(s[:i], '/')
}

// registryHosts is a package manager: the hosts its index, registry and
// proxy options name, and the URLs among its operands.
func registryHosts(spec optSpec, keys ...string) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		o := parseOpts(c.args, spec, false)
		w.optHosts(c, &o, keys...)
		for _, op := range o.operands {
			if !op.unknown && strings.Contains(op.lit, "://") {
				w.host(c, strings.TrimPrefix(op.lit, "git+"))
			}
		}
		return stage{}
	}
}

var (
	runPip = registryHosts(optSpec{val: "ifcre", long: map[string]bool{"index-url": true, "extra-index-url": true, "find-links": true,
		"trusted-host": true, "requirement": true, "constraint": true, "proxy": true, "target": true, "index": true, "default-index": true}},
		"i", "index-url", "extra-index-url", "f", "find-links", "trusted-host", "proxy", "index", "default-index")
	runNpm = registryHosts(optSpec{long: map[string]bool{"registry": true, "proxy": true, "https-proxy": true}}, "registry", "proxy", "https-proxy")
)

// runGo reads "go env -w NAME=value" for the proxies it sets.
func runGo(w *walker, c *cmd) stage {
	if len(c.args) < 3 || c.args[0].lit != "env" || c.args[1].lit != "-w" {
		return stage{}
	}
	for _, a := range c.args[2:] {
		if name, val, ok := strings.Cut(a.lit, "="); ok && !a.unknown {
			w.envHosts(name, lit(val))
		}
	}
	return stage{}
}
