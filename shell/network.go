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
	// A web scheme needs no "//": clients read "http:h/p", "http:/h/p" and
	// "http:\\h/p" as host h, as they read "http://h/p".
	if i := strings.IndexByte(s, ':'); i > 0 && !strings.HasPrefix(s[i:], "://") {
		switch strings.ToLower(s[:i]) {
		case "http", "https", "ws", "wss", "ftp":
			s = s[:i] + "://" + strings.TrimLeft(s[i+1:], "/\\")
		}
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
	case "GOPROXY", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "npm_config_registry", "NPM_CONFIG_REGISTRY",
		"UV_INDEX_URL", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "FTP_PROXY",
		"ftp_proxy", "RSYNC_PROXY", "npm_config_proxy", "npm_config_https_proxy", "NPM_CONFIG_PROXY",
		"NPM_CONFIG_HTTPS_PROXY", "PIP_PROXY", "YARN_HTTPS_PROXY", "YARN_HTTP_PROXY", "CARGO_HTTP_PROXY",
		"UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX", "YARN_REGISTRY",
		"YARN_NPM_REGISTRY_SERVER", "BUN_CONFIG_REGISTRY":
	default:
		return
	}
	c := &cmd{name: name, seg: w.r.Segments}
	registry := !strings.HasSuffix(strings.ToLower(name), "proxy") || name == "GOPROXY"
	if x.unknown {
		w.hostWord(c, x)
		if registry {
			w.install(c, InstallRedirect, x)
		}
		return
	}
	for _, v := range x.vals {
		for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' }) {
			if part == "direct" || part == "off" {
				continue
			}
			w.host(c, part)
			if registry {
				w.installValue(c, InstallRedirect, part)
			}
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
	"continue-at": true, "time-cond": true, "variable": true, "expand-url": true, "noproxy": true, "socks4": true, "socks4a": true,
	"proxy1.0": true, "dns-servers": true, "doh-url": true}

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
	from := len(w.r.Hosts)
	w.optHosts(c, &o, "x", "proxy", "preproxy", "socks5", "socks5-hostname", "socks4", "socks4a", "proxy1.0", "url", "doh-url")
	// --resolve HOST:PORT:ADDR[,ADDR…] and --connect-to H1:P1:H2:P2: the
	// connection goes to the address or host given, not the URL's.
	for _, x := range o.all("resolve") {
		w.curlRedirect(c, x, 2, 2)
	}
	for _, x := range o.all("connect-to") {
		w.curlRedirect(c, x, 2, 3)
	}
	// A config file (-K -, -K FILE) holds options veto does not read: any
	// URL, proxy or --resolve in it goes where veto cannot see.
	if o.has("K", "config") {
		w.r.Hosts = append(w.r.Hosts, Host{Unknown: true, Command: c.name, Segment: c.seg})
	}
	for _, u := range o.operands {
		w.hostWord(c, u)
	}
	if curlSends(c, &o) {
		w.uploadFrom(c, from)
	}
	if o.has("O", "remote-name", "remote-name-all") {
		w.wroteDownloads(o.operands)
	}
	return stage{}
}

// curlRedirect records the host a --resolve or --connect-to entry sends
// the connection to: its field (0-based, colon-separated, brackets kept
// whole), each of a comma-separated list; an entry veto cannot read is a
// host it cannot determine.
func (w *walker) curlRedirect(c *cmd, x word, field, splits int) {
	if x.unknown {
		w.hostWord(c, x)
		return
	}
	for _, v := range x.vals {
		v = strings.TrimLeft(v, "+")
		if strings.HasPrefix(v, "-") {
			continue // --resolve -HOST:PORT removes an entry
		}
		parts := splitColons(v, splits)
		if len(parts) <= field {
			w.r.Hosts = append(w.r.Hosts, Host{Unknown: true, Command: c.name, Segment: c.seg})
			continue
		}
		for _, h := range strings.Split(parts[field], ",") {
			if h == "" {
				continue // --connect-to's empty host: the URL's own
			}
			if strings.Count(h, ":") > 1 && !strings.HasPrefix(h, "[") {
				h = "[" + h + "]"
			}
			w.host(c, h)
		}
	}
}

// splitColons splits s at its first n colons outside brackets: a last
// field holding more colons (an unbracketed IPv6 list of --resolve) is
// kept whole.
func splitColons(s string, n int) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ':':
			if depth == 0 && len(out) < n {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func runWget(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "OoaPiUeTtlQwYAR", long: map[string]bool{"output-document": true, "output-file": true,
		"append-output": true, "directory-prefix": true, "input-file": true, "post-file": true, "body-file": true, "post-data": true, "body-data": true, "method": true,
		"user-agent": true, "header": true, "execute": true, "tries": true, "timeout": true, "level": true, "user": true,
		"password": true, "http-user": true, "http-password": true, "load-cookies": true, "save-cookies": true, "referer": true,
		"config": true}}, false)
	w.optFiles(&o, true, notStdio, "O", "output-document", "o", "output-file", "a", "append-output", "save-cookies")
	for _, f := range o.all("O", "output-document") {
		w.wrote(f, nil, false, true)
	}
	w.optFiles(&o, true, nil, "P", "directory-prefix")
	// --config reads wgetrc commands veto does not see: a proxy among them.
	if o.has("config") {
		w.optFiles(&o, false, notStdio, "config")
		w.r.Hosts = append(w.r.Hosts, Host{Unknown: true, Command: c.name, Segment: c.seg})
	}
	// -e runs a wgetrc command: a proxy set there is where it connects.
	for _, x := range o.all("e", "execute") {
		if x.unknown {
			w.hostWord(c, x)
			continue
		}
		for _, v := range x.vals {
			name, val, ok := strings.Cut(v, "=")
			name = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(name), "-", "_"))
			if ok && (name == "http_proxy" || name == "https_proxy" || name == "ftp_proxy") {
				w.envHosts(name, lit(strings.TrimSpace(val)))
			}
		}
	}
	w.optFiles(&o, false, notStdio, "post-file", "body-file", "load-cookies")
	from := len(w.r.Hosts)
	if o.has("i", "input-file") {
		w.optFiles(&o, false, notStdio, "i", "input-file")
		w.r.Hosts = append(w.r.Hosts, Host{Unknown: true, Command: c.name, Segment: c.seg})
	}
	for _, u := range o.operands {
		w.hostWord(c, u)
	}
	for _, x := range o.all("post-data", "body-data") {
		if x.unknown { // data made by a substitution: local data
			w.uploadFrom(c, from)
			break
		}
	}
	for _, x := range o.all("post-file", "body-file") {
		if x.unknown || !harmless[x.lit] || (x.lit == "-" || x.lit == "/dev/stdin") && localInput(c) {
			w.uploadFrom(c, from)
			break
		}
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
	from := len(w.r.Hosts)
	w.optHosts(c, &o, "x", "proxy")
	for _, x := range o.all("e", "c", "exec", "sh-exec") {
		w.scriptOf(c, x)
	}
	if len(o.operands) > 0 {
		w.hostWord(c, o.operands[0])
	}
	w.streamUpload(c, from)
	return stage{}
}

func runSocat(w *walker, c *cmd) stage {
	from := len(w.r.Hosts)
	defer func() {
		// A file address read (not one opened only to write), or local
		// data on standard input, is sent to the addresses that reach a
		// host.
		for _, a := range c.args {
			kind, rest, _ := strings.Cut(a.lit, ":")
			switch strings.ToUpper(kind) {
			case "OPEN", "FILE", "GOPEN":
				r := strings.ToLower(rest)
				if !strings.Contains(r, ",wronly") && !strings.Contains(r, ",creat") && !strings.Contains(r, ",append") && !strings.Contains(r, ",trunc") {
					w.uploadFrom(c, from)
					return
				}
			}
		}
		w.streamUpload(c, from)
	}()
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
	from := len(w.r.Hosts)
	if len(o.operands) > 0 {
		w.hostWord(c, o.operands[0])
	}
	w.streamUpload(c, from)
	return stage{}
}

var sshValued = optSpec{val: "bcDEeFIiJLlmOoPpQRSWwB"}

// runSSH reaches a host and runs a command there: the command is judged
// strictly, and its paths are the remote machine's, not ours.
func runSSH(w *walker, c *cmd) stage {
	o := parseOpts(c.args, sshValued, true)
	w.sshOptions(c, &o)
	if len(o.operands) == 0 {
		return stage{}
	}
	from := len(w.r.Hosts)
	w.hostWord(c, o.operands[0])
	w.optHosts(c, &o, "J")
	w.streamUpload(c, from)
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
	short := "PiFolcJSeBfTD" // scp's and sftp's options that take a value
	if c.name == "rsync" {
		short = "eBfTM" // rsync's -P, -i, -l, -o, -c, -S and -F are flags
	}
	o := parseOpts(c.args, optSpec{val: short, long: map[string]bool{"rsh": true, "rsync-path": true, "filter": true,
		"exclude": true, "include": true, "exclude-from": true, "include-from": true, "files-from": true, "port": true,
		"password-file": true, "temp-dir": true, "log-file": true, "partial-dir": true, "backup-dir": true, "suffix": true,
		"chmod": true, "chown": true, "timeout": true, "bwlimit": true, "compare-dest": true, "copy-dest": true, "link-dest": true}}, false)
	// The programs they run: rsync's remote shell (-e, --rsh) here and
	// its rsync-path there; scp's and sftp's ssh program (-S), sftp's
	// server (-D); ssh's own commands (-o ProxyCommand=…).
	if c.name == "rsync" {
		w.unseenOptions(c, c.args, "--rsh=", "--rsync-path=", "-e")
		for _, x := range o.all("e", "rsh") {
			w.scriptOf(c, x)
		}
		for _, x := range o.all("rsync-path") {
			sub := w.fork()
			sub.remote, sub.strict = true, true
			sub.scriptOf(c, x)
		}
	} else {
		for _, x := range o.all("S", "D") {
			w.scriptOf(c, x)
		}
		w.sshOptions(c, &o)
	}
	local := false // a local operand before the last: it is sent
	for i, x := range o.operands {
		last := i == len(o.operands)-1 && len(o.operands) > 1
		if x.unknown {
			from := len(w.r.Hosts)
			w.hostWord(c, x)
			if last || c.name == "sftp" {
				w.uploadFrom(c, from)
			}
			local = true
			continue
		}
		if remoteSpec(x.lit) {
			from := len(w.r.Hosts)
			spec := x.lit
			if h, _, ok := strings.Cut(spec, "::"); ok && !strings.Contains(spec, "://") {
				spec = h
			}
			w.host(c, spec)
			if (last && local) || (c.name == "sftp" && (localInput(c) || o.has("b"))) {
				w.uploadFrom(c, from)
			}
			continue
		}
		if !last {
			local = true
		}
		if c.name == "sftp" {
			from := len(w.r.Hosts)
			w.hostWord(c, x)
			if localInput(c) || o.has("b") {
				w.uploadFrom(c, from)
			}
			continue
		}
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

// sshOptions judges ssh's -o options that run a command: ProxyCommand,
// LocalCommand and KnownHostsCommand here, RemoteCommand on the host.
func (w *walker) sshOptions(c *cmd, o *opts) {
	for _, x := range o.all("o") {
		if x.unknown {
			w.finding(CannotVouch, c.seg, "ssh is given an option veto cannot see, which may run a command.")
			continue
		}
		for _, v := range x.vals {
			// "Key=Value" or "Key Value".
			v = strings.TrimSpace(v)
			key, val := v, ""
			if i := strings.IndexAny(v, "= \t"); i >= 0 {
				key, val = v[:i], strings.TrimLeft(v[i+1:], "= \t")
			}
			val = strings.TrimSpace(val)
			switch strings.ToLower(strings.TrimSpace(key)) {
			case "proxycommand", "localcommand", "knownhostscommand":
				if val != "none" && val != "" {
					w.fork().script(val, c.depth+1)
				}
			case "remotecommand":
				sub := w.fork()
				sub.remote, sub.strict = true, true
				sub.script(val, c.depth+1)
			}
		}
	}
}
