package shell

// Secrets printed without reading a file (issue 29): a variable named like
// a secret's expanded where the command prints it or sends it away, and
// the programs whose output is a secret (secretPrinters, a table). Both are
// treated like an environment dump (RuleEnvDump).

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// secretWords are the words of a variable's name (split on "_" and at
// camel-case humps) that say it holds a secret: TOKEN in GITHUB_TOKEN, KEY
// in AWS_SECRET_ACCESS_KEY, PASSWORD in POSTGRES_PASSWORD.
var secretWords = []string{"TOKEN", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD", "PASS", "PASSPHRASE",
	"PWD", "KEY", "KEYS", "APIKEY", "PAT", "CREDENTIAL", "CREDENTIALS", "CRED", "CREDS", "COOKIE", "COOKIES", "BEARER",
	"DSN", "OTP", "SALT", "AUTHTOKEN", "SECRETKEY", "ACCESSKEY", "PRIVATEKEY"}

// secretSuffixes end a word that says a secret (GITHUBTOKEN, DBPASSWORD,
// OPENAIAPIKEY): a word that only contains one (TOKENIZERS, KEYBOARD) does
// not.
var secretSuffixes = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "SECRETKEY", "ACCESSKEY", "PRIVATEKEY"}

// secretQualifiers, right after a secret's word, make the name about the
// secret rather than the secret itself: TOKEN_COUNT, MAX_TOKENS' kin,
// AWS_ACCESS_KEY_ID, SSH_KEY_PATH, DB_PASSWORD_FILE (a path), SECRET_NAME.
var secretQualifiers = []string{"COUNT", "COUNTS", "LIMIT", "SIZE", "LEN", "LENGTH", "NUM", "MAX", "MIN", "FILE", "PATH",
	"DIR", "URL", "URI", "ENDPOINT", "ID", "IDS", "NAME", "TYPE", "HEADER", "PREFIX", "EXPIRY", "EXPIRES", "TTL",
	"TIMEOUT", "LOCATION", "REF", "ARN", "FINGERPRINT", "ALGORITHM", "ALG", "LABEL", "FORMAT", "MODE"}

// secretNames are whole names that hold a secret though no word says so:
// connection URLs that carry their password.
var secretNames = []string{"DATABASE_URL", "DATABASE_URI", "DB_URL", "MONGODB_URI", "MONGO_URL", "MONGO_URI",
	"REDIS_URL", "AMQP_URL", "CLOUDAMQP_URL", "CONNECTION_STRING", "_AUTH"}

// secretHints are in every name secretName accepts: a name holding none
// is judged without splitting it into words.
var secretHints = []string{"TOKEN", "SECRET", "PASS", "PWD", "KEY", "PAT", "CRED", "COOKIE", "BEARER", "DSN", "OTP",
	"SALT", "URL", "URI", "AUTH", "STRING"}

// secretName reports whether a variable's name is shaped like a secret's:
// one of its words is a secret's word (TOKEN, KEY, PASSWORD, SECRET, PAT,
// …) or ends in one (GITHUBTOKEN), not followed by a word that makes it
// about the secret (TOKEN_COUNT, KEY_ID, PASSWORD_FILE), or it is a
// connection URL (DATABASE_URL). PWD and OLDPWD, KEYBOARD, TOKENIZERS_PARALLELISM,
// SSH_AUTH_SOCK and API_URL are not. printenv, declare -p and every
// expansion a command prints or sends share it.
func secretName(name string) bool {
	if name == "" {
		return false
	}
	n := strings.ToUpper(name)
	if n == "PWD" || n == "OLDPWD" {
		return false
	}
	hinted := false
	for _, h := range secretHints {
		if strings.Contains(n, h) {
			hinted = true
			break
		}
	}
	if !hinted {
		return false // most names (HOME, PATH, f): no word list built
	}
	for _, s := range secretNames {
		if n == s || strings.HasSuffix(n, "_"+s) || strings.HasSuffix(n, s) && strings.HasPrefix(s, "_") {
			return true
		}
	}
	words := nameWords(name)
	for i, word := range words {
		secret := slices.Contains(secretWords, word)
		for _, s := range secretSuffixes {
			secret = secret || strings.HasSuffix(word, s)
		}
		if secret && (i+1 == len(words) || !slices.Contains(secretQualifiers, words[i+1])) {
			return true
		}
	}
	return false
}

// nameWords splits a variable's name into upper-case words at "_", "-"
// and camel-case humps: apiKey is API KEY, GITHUB_TOKEN is GITHUB TOKEN.
func nameWords(name string) []string {
	var out []string
	start := 0
	flush := func(end int) {
		if end > start {
			out = append(out, strings.ToUpper(name[start:end]))
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.':
			flush(i)
			start = i + 1
		case c >= 'A' && c <= 'Z' && i > start && name[i-1] >= 'a' && name[i-1] <= 'z':
			flush(i)
			start = i
		}
	}
	flush(len(name))
	return out
}

// noteSecret records a parameter expansion that yields a secret's value:
// a variable named like a secret's that the command did not assign itself
// (so the value is the environment's), or an indirect ${!name} whose name
// veto cannot know. ${#X} (a length), ${X:+word} (a test) and ${!prefix*}
// (names) print no value.
func (w *walker) noteSecret(p *syntax.ParamExp) {
	if w.code || p.Param == nil || p.Length || p.Names != 0 {
		return
	}
	if p.Exp != nil && (p.Exp.Op == syntax.AlternateUnset || p.Exp.Op == syntax.AlternateUnsetOrNull) {
		return
	}
	name := p.Param.Value
	if p.Excl {
		if v, ok := w.vars[name]; ok && v != nil {
			for _, n := range v {
				if secretName(n) {
					w.r.secrets = append(w.r.secrets, n)
					return
				}
			}
			return
		}
		w.r.secrets = append(w.r.secrets, "") // an indirect name veto cannot know
		return
	}
	if _, assigned := w.vars[name]; assigned && !w.tainted[name] || !assigned && !secretName(name) {
		return
	}
	w.r.secrets = append(w.r.secrets, name)
}

// taint marks a variable just assigned as holding a secret when the value
// expanded one (the report's list grew past n), and clears the mark when
// it did not: T=$GITHUB_TOKEN; echo $T prints the token.
func (w *walker) taint(name string, n int) {
	if len(w.r.secrets) > n {
		if w.tainted == nil {
			w.tainted = map[string]bool{}
		}
		w.tainted[name] = true
		return
	}
	delete(w.tainted, name)
}

// secretPassers are the programs whose output is what they were given, in
// their arguments or on their input: a secret given to one is printed
// (echo "$TOKEN", cat <<< "$TOKEN", … | base64).
var secretPassers = map[string]bool{
	"echo": true, "printf": true, "print": true, "cat": true, "tac": true, "head": true, "tail": true, "less": true,
	"more": true, "tee": true, "base64": true, "base32": true, "basenc": true, "xxd": true, "od": true, "hexdump": true,
	"rev": true, "tr": true, "cut": true, "sed": true, "awk": true, "gawk": true, "mawk": true, "grep": true,
	"egrep": true, "fgrep": true, "rg": true, "sort": true, "uniq": true, "fold": true, "column": true, "nl": true,
	"paste": true, "jq": true, "yq": true, "logger": true, "wall": true, "write": true, "openssl": true, "gzip": true,
	"iconv": true, "expand": true, "fmt": true, "xargs": true, "strings": true, "bat": true,
}

// secretSenders are the programs that send what they are given to a host:
// a secret given to one leaves unless every host it reaches is this
// machine or the secret's own service (secretHosts).
var secretSenders = map[string]bool{
	"curl": true, "wget": true, "nc": true, "ncat": true, "netcat": true, "socat": true, "telnet": true, "http": true,
	"https": true, "xh": true, "aria2c": true, "ssh": true, "scp": true, "sftp": true, "rsync": true, "ftp": true,
}

// secretHosts are the hosts a well-known token is meant for: sending
// GITHUB_TOKEN to api.github.com is how it is used.
var secretHosts = map[string][]string{
	"GITHUB_TOKEN":           {"github.com", "*.github.com", "ghcr.io", "*.githubusercontent.com"},
	"GH_TOKEN":               {"github.com", "*.github.com", "ghcr.io", "*.githubusercontent.com"},
	"GITHUB_PAT":             {"github.com", "*.github.com", "ghcr.io", "*.githubusercontent.com"},
	"GITLAB_TOKEN":           {"gitlab.com", "*.gitlab.com"},
	"OPENAI_API_KEY":         {"api.openai.com"},
	"ANTHROPIC_API_KEY":      {"api.anthropic.com"},
	"NPM_TOKEN":              {"registry.npmjs.org"},
	"HF_TOKEN":               {"huggingface.co", "*.huggingface.co"},
	"HUGGING_FACE_HUB_TOKEN": {"huggingface.co", "*.huggingface.co"},
	"SLACK_BOT_TOKEN":        {"slack.com", "*.slack.com"},
	"STRIPE_SECRET_KEY":      {"api.stripe.com"},
	"CLOUDFLARE_API_TOKEN":   {"api.cloudflare.com"},
}

// secretUse judges a simple command that expanded a secret (from n on in
// the report's list) or was fed one on its input: a passer passes it on;
// any other program consumes it (docker login --password-stdin, gh auth
// login --with-token). Senders are secretSend's.
func (w *walker) secretUse(st stage, n int, up []stage, prog string, seg int) stage {
	fed := len(up) > 0 && up[len(up)-1].secret
	if (len(w.r.secrets) > n || fed) && secretPassers[prog] {
		st.secret = true
	}
	return st
}

// secretSend judges a sender (secretSenders) after its hosts are known: a
// secret-named variable in one of its arguments, or a secret fed on its
// input, sent to a host that is neither this machine nor the secret's own
// service is refused. A secret where a credential goes (curl -H
// "Authorization: Bearer $TOKEN", -u user:$PASS, wget --password) is the
// credential's use, not a leak, and stays allowed.
func (w *walker) secretSend(c *cmd) {
	if w.code || !secretSenders[c.name] {
		return
	}
	var names []string
	if len(c.up) > 0 && c.up[len(c.up)-1].secret {
		names = append(names, "")
	}
	for i, a := range c.args {
		found := w.secretsIn(a.src)
		if len(found) == 0 || authPosition(c.name, c.args, i) {
			continue
		}
		names = append(names, found...)
	}
	if len(names) > 0 && !w.hostsFor(c.seg, names) {
		w.r.find(RuleEnvDump, SecretPrint, c.seg, "The command sends the value of a variable named like a secret to another host.")
	}
}

// secretsIn are the secret-named variables a word expands that the
// command did not assign itself ("" for an indirect name veto cannot know).
func (w *walker) secretsIn(x *syntax.Word) []string {
	if x == nil {
		return nil
	}
	var out []string
	var parts func([]syntax.WordPart)
	parts = func(ps []syntax.WordPart) {
		for _, p := range ps {
			switch p := p.(type) {
			case *syntax.DblQuoted:
				parts(p.Parts)
			case *syntax.BraceExp: // syntax.Walk does not know it
				for _, e := range p.Elems {
					parts(e.Parts)
				}
			case *syntax.ParamExp:
				before := len(w.r.secrets)
				w.noteSecret(p)
				out = append(out, w.r.secrets[before:]...)
				w.r.secrets = w.r.secrets[:before]
			}
		}
	}
	parts(x.Parts)
	return out
}

// litPrefix is the literal text a word starts with, up to its first
// expansion: "Authorization: Bearer " of "Authorization: Bearer $T".
func litPrefix(x *syntax.Word) string {
	if x == nil {
		return ""
	}
	var b strings.Builder
	var parts func([]syntax.WordPart) bool
	parts = func(ps []syntax.WordPart) bool {
		for _, p := range ps {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(p.Value)
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				if !parts(p.Parts) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	parts(x.Parts)
	return b.String()
}

// authPosition reports whether argument i of a sender is where a
// credential goes: a header whose name says authorization, a token or a
// key, a user:password, a bearer token, a password option.
func authPosition(prog string, args []word, i int) bool {
	a := args[i].lit
	if args[i].unknown {
		a = litPrefix(args[i].src)
	}
	prev := ""
	if i > 0 && !args[i-1].unknown {
		prev = args[i-1].lit
	}
	authHeader := func(h string) bool {
		name, _, ok := strings.Cut(strings.ToLower(h), ":")
		return ok && (strings.Contains(name, "auth") || strings.Contains(name, "token") || strings.Contains(name, "key"))
	}
	switch prog {
	case "curl", "http", "https", "xh":
		switch prev {
		case "-H", "--header", "--proxy-header":
			return authHeader(a)
		case "-u", "--user", "-U", "--proxy-user", "--oauth2-bearer", "--pass", "-a", "--auth":
			return true
		}
		if strings.HasPrefix(a, "--header=") {
			return authHeader(strings.TrimPrefix(a, "--header="))
		}
		if strings.HasPrefix(a, "-H") && len(a) > 2 {
			return authHeader(a[2:])
		}
		if strings.HasPrefix(a, "-u") && len(a) > 2 || strings.HasPrefix(a, "--user=") || strings.HasPrefix(a, "--oauth2-bearer=") {
			return true
		}
		return (prog == "http" || prog == "https" || prog == "xh") && authHeader(a) && !strings.Contains(a, "://")
	case "wget":
		if prev == "--header" {
			return authHeader(a)
		}
		for _, o := range []string{"--password=", "--http-password=", "--ftp-password=", "--proxy-password=", "--user=", "--http-user="} {
			if strings.HasPrefix(a, o) {
				return true
			}
		}
		if strings.HasPrefix(a, "--header=") {
			return authHeader(strings.TrimPrefix(a, "--header="))
		}
		switch prev {
		case "--password", "--http-password", "--ftp-password", "--proxy-password", "--user", "--http-user":
			return true
		}
	}
	return false
}

// hostsFor reports whether every host segment seg reaches may be given the
// secrets names: this machine, or every name's own service.
func (w *walker) hostsFor(seg int, names []string) bool {
	for _, h := range w.r.Hosts {
		if h.Segment != seg {
			continue
		}
		if h.Unknown {
			return false
		}
		host := strings.ToLower(strings.Trim(h.Host, "[]"))
		if host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1" {
			continue
		}
		for _, n := range names {
			if !slices.ContainsFunc(secretHosts[strings.ToUpper(n)], func(p string) bool {
				return p == host || strings.HasPrefix(p, "*.") && strings.HasSuffix(host, p[1:])
			}) {
				return false
			}
		}
	}
	return true
}

// printsSecret reports a stage whose output, a secret's value, reaches the
// command's output or a file.
func (w *walker) printsSecret(st stage, seg int) {
	if st.secret {
		w.r.find(RuleEnvDump, SecretPrint, seg, "The command prints the value of a variable named like a secret.")
	}
}

// secretPrinter is one way of running a program that prints a secret: the
// words that must follow the program in this order (options and other
// operands may come between), and, when any is given, the options one of
// which must be there (a long option also as --opt=value).
type secretPrinter struct {
	words []string
	opts  []string
}

// secretPrinters are the programs whose output is a secret: a token, a
// password, a private key, credentials. Harmless neighbours stay allowed:
// gh auth status, aws configure list, kubectl config view (redacted),
// kubectl get secrets (names), gpg --list-keys, gpg --export (public).
var secretPrinters = map[string][]secretPrinter{
	"gh": {{words: []string{"auth", "token"}}, {words: []string{"auth", "status"}, opts: []string{"-t", "--show-token"}}},
	"aws": {{words: []string{"configure", "export-credentials"}}, {words: []string{"ecr", "get-login-password"}},
		{words: []string{"ecr-public", "get-login-password"}}, {words: []string{"sts", "get-session-token"}},
		{words: []string{"sts", "assume-role"}}, {words: []string{"sts", "get-federation-token"}},
		{words: []string{"codeartifact", "get-authorization-token"}}, {words: []string{"secretsmanager", "get-secret-value"}},
		{words: []string{"ssm", "get-parameter"}, opts: []string{"--with-decryption"}},
		{words: []string{"ssm", "get-parameters"}, opts: []string{"--with-decryption"}}},
	"gcloud": {{words: []string{"auth", "print-access-token"}}, {words: []string{"auth", "print-identity-token"}},
		{words: []string{"auth", "application-default", "print-access-token"}}, {words: []string{"config", "config-helper"}},
		{words: []string{"secrets", "versions", "access"}}},
	"az":      {{words: []string{"account", "get-access-token"}}, {words: []string{"keyvault", "secret", "show"}}, {words: []string{"acr", "login"}, opts: []string{"--expose-token"}}},
	"kubectl": {{words: []string{"config", "view"}, opts: []string{"--raw"}}, {words: []string{"create", "token"}}},
	"git":     {{words: []string{"credential", "fill"}}, {words: []string{"credential-store", "get"}}, {words: []string{"credential-cache", "get"}}},
	"gpg":     {{opts: []string{"--export-secret-keys", "--export-secret-subkeys", "--export-secret-key", "--export-secret-subkey"}}},
	"gpg2":    {{opts: []string{"--export-secret-keys", "--export-secret-subkeys", "--export-secret-key", "--export-secret-subkey"}}},
	"security": {{words: []string{"find-generic-password"}, opts: []string{"-w", "-g"}},
		{words: []string{"find-internet-password"}, opts: []string{"-w", "-g"}}, {words: []string{"dump-keychain"}, opts: []string{"-d"}}},
	"op":          {{words: []string{"read"}}, {words: []string{"item", "get"}}, {words: []string{"document", "get"}}, {words: []string{"inject"}}},
	"vault":       {{words: []string{"kv", "get"}}, {words: []string{"read"}}, {words: []string{"print", "token"}}, {words: []string{"token", "lookup"}}},
	"doppler":     {{words: []string{"secrets"}}},
	"heroku":      {{words: []string{"auth:token"}}},
	"pass":        {{words: []string{"show"}}},
	"gopass":      {{words: []string{"show"}}},
	"bw":          {{words: []string{"get"}}},
	"lpass":       {{words: []string{"show"}}},
	"secret-tool": {{words: []string{"lookup"}}},
}

// secretProgram refuses a program run the way that prints a secret
// (secretPrinters, kubectl get secret with its data, aws configure get of
// a key) or another process's environment (ps e, jq's env).
func (w *walker) secretProgram(c *cmd) {
	if w.code || w.remote {
		return
	}
	switch _, listed := secretPrinters[c.name]; {
	case listed, c.name == "aws", c.name == "kubectl", c.name == "oc", c.name == "ps", c.name == "jq", c.name == "gojq", c.name == "jaq":
	default:
		return // most commands: no argument list built
	}
	args := make([]string, 0, len(c.args))
	for _, a := range c.args {
		if a.unknown {
			args = append(args, "")
			continue
		}
		args = append(args, a.lit)
	}
	for _, p := range secretPrinters[c.name] {
		if p.matches(args) {
			w.r.find(RuleEnvDump, SecretPrint, c.seg, "The command prints a secret: a token, a password, a private key or credentials.")
			return
		}
	}
	switch c.name {
	case "aws":
		if i := slices.Index(args, "get"); i > 0 && slices.Contains(args[:i], "configure") {
			for _, a := range args[i+1:] {
				if !strings.HasPrefix(a, "-") {
					if a == "" || secretName(a[strings.LastIndex(a, ".")+1:]) {
						w.r.find(RuleEnvDump, SecretPrint, c.seg, "The command prints a secret: a token, a password, a private key or credentials.")
					}
					break
				}
			}
		}
	case "kubectl", "oc":
		if kubectlSecretData(args) {
			w.r.find(RuleEnvDump, SecretPrint, c.seg, "The command prints a secret: a token, a password, a private key or credentials.")
		}
	case "ps":
		// BSD options come first and without a dash: e shows each
		// process's environment (ps e, ps auxeww); macOS's -E too.
		bsd := len(args) > 0 && args[0] != "" && !strings.HasPrefix(args[0], "-") &&
			strings.Trim(args[0], "auxwejfhlrTSvcmnHLMXZ") == "" && strings.Contains(args[0], "e")
		if bsd || slices.Contains(args, "-E") {
			w.r.find(RuleEnvDump, EnvDump, c.seg, "The command prints other processes' environment, which holds secrets.")
		}
	case "jq", "gojq", "jaq":
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case a == "--arg" || a == "--argjson" || a == "--slurpfile" || a == "--rawfile":
				i += 2
			case a == "--indent" || a == "-L":
				i++
			case a == "-f" || a == "--from-file" || a == "--args" || a == "--jsonargs":
				return // the filter is in a file, or what follows are values
			case a == "" || strings.HasPrefix(a, "-"):
			default:
				if jqReadsEnv(a) {
					w.r.find(RuleEnvDump, EnvDump, c.seg, "The command prints the environment, which holds secrets.")
				}
				return // the filter is the first operand
			}
		}
	}
}

func (p secretPrinter) matches(args []string) bool {
	i := 0
	for _, a := range args {
		if i < len(p.words) && a == p.words[i] {
			i++
		}
	}
	if i < len(p.words) {
		return false
	}
	if len(p.opts) == 0 {
		return true
	}
	for _, a := range args {
		for _, o := range p.opts {
			if a == o || strings.HasPrefix(o, "--") && strings.HasPrefix(a, o+"=") {
				return true
			}
		}
	}
	return false
}

// kubectlSecretData reports kubectl get of a secret with its data printed
// (-o yaml, json, jsonpath, go-template, …): the list of names is not.
func kubectlSecretData(args []string) bool {
	get := slices.Index(args, "get")
	if get < 0 {
		return false
	}
	secret, output := false, false
	for i, a := range args[get+1:] {
		switch {
		case a == "" && !secret:
			secret = true // a resource veto cannot know
		case a == "secret" || a == "secrets" || strings.HasPrefix(a, "secret/") || strings.HasPrefix(a, "secrets/") ||
			strings.Contains(a, "secret") && strings.Contains(a, ","):
			secret = true
		case a == "-o" || a == "--output":
			if j := get + 1 + i + 1; j < len(args) && args[j] != "name" && args[j] != "wide" {
				output = true
			}
		case strings.HasPrefix(a, "-o") && len(a) > 2 || strings.HasPrefix(a, "--output="):
			v := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(a, "--output="), "-o"), "=")
			if v != "name" && v != "wide" {
				output = true
			}
		}
	}
	return secret && output
}

// jqReadsEnv reports a jq filter that reads the environment: env or $ENV
// as a word of its own (.env, a field, is not).
func jqReadsEnv(f string) bool {
	for i := 0; i+3 <= len(f); i++ {
		var n int
		switch {
		case strings.HasPrefix(f[i:], "$ENV"):
			n = 4
		case strings.HasPrefix(f[i:], "env") && (i == 0 || !wordByte(f[i-1]) && f[i-1] != '.' && f[i-1] != '$'):
			n = 3
		default:
			continue
		}
		if i+n == len(f) || !wordByte(f[i+n]) {
			return true
		}
	}
	return false
}

func wordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// envAccessors are how interpreter code reads one environment variable,
// each followed by the variable's name: os.environ["X"], os.getenv("X"),
// process.env.X, ENV["X"], $ENV{X}, ENVIRON["X"], $_ENV["X"].
var envAccessors = []string{"environ[", "environ.get(", "getenv(", "process.env.", "process.env[", "Deno.env.get(",
	"ENV[", "ENV.fetch(", "$ENV{", "ENVIRON[", "$_ENV[", "$_SERVER["}

// codePrints are the calls that print in the interpreters veto reads.
var codePrints = []string{"print", "console.", "stdout.write", "stderr.write", "puts", "echo", "say ", "say(", "printf", "pp "}

// codePrintsSecret reports interpreter code that reads an environment
// variable named like a secret's and prints: python3 -c
// 'import os; print(os.environ["AWS_SECRET_ACCESS_KEY"])', node -p
// process.env.GITHUB_TOKEN. Code that only uses one (a client given its
// key) does not print it.
func codePrintsSecret(c *cmd, src string) bool {
	secret := false
	for _, acc := range envAccessors {
		for i := 0; !secret; {
			j := strings.Index(src[i:], acc)
			if j < 0 {
				break
			}
			i += j + len(acc)
			rest := strings.TrimLeft(src[i:], " '\"`")
			k := 0
			for k < len(rest) && wordByte(rest[k]) {
				k++
			}
			secret = secretName(rest[:k])
		}
	}
	if !secret {
		return false
	}
	for _, a := range c.args {
		if a.lit == "-p" || a.lit == "--print" || a.lit == "-pe" {
			return true // node -p, perl -pe print what they evaluate
		}
	}
	for _, p := range codePrints {
		if strings.Contains(src, p) {
			return true
		}
	}
	return false
}
