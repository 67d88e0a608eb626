package shell

// The table of programs veto knows, and the analysis of each.

import (
	"strings"
	"sync"
)

// pythonName reports whether name is python, python3, python3.12, pypy3, ….
func pythonName(name string) bool {
	rest, ok := strings.CutPrefix(name, "python")
	if !ok {
		rest, ok = strings.CutPrefix(name, "pypy")
	}
	return ok && strings.Trim(rest, "0123456789.") == ""
}

// handler returns the analysis of a program, or nil for programs veto
// knows nothing about (they are recorded, and their arguments are not
// judged as paths).
func handler(name string) func(*walker, *cmd) stage {
	if h, ok := handlers()[name]; ok {
		return h
	}
	switch {
	case pythonName(name):
		return runInterp
	case strings.HasPrefix(name, "mkfs"):
		return destroyDisk
	}
	return privilegeHandler(name)
}

// handlers is built on first use, not at package init: a process that
// never analyses a command pays nothing for it.
var (
	handlersOnce  sync.Once
	handlerByName map[string]func(*walker, *cmd) stage
)

func handlers() map[string]func(*walker, *cmd) stage {
	handlersOnce.Do(buildHandlers)
	return handlerByName
}

func buildHandlers() {
	handlers := map[string]func(*walker, *cmd) stage{
		"sudo":     wrapSudo,
		"doas":     wrapOpts(optSpec{val: "uC"}),
		"su":       wrapSu,
		"runuser":  wrapSu,
		"env":      wrapEnv,
		"command":  wrapCommand,
		"builtin":  wrapOpts(optSpec{}),
		"exec":     wrapOpts(optSpec{val: "a"}),
		"nohup":    wrapOpts(optSpec{flags: []string{"help", "version"}}),
		"time":     wrapOpts(optSpec{val: "fo", long: map[string]bool{"format": true, "output": true}, flags: []string{"portability", "append", "verbose", "quiet", "help", "version"}}),
		"nice":     wrapOpts(optSpec{val: "n", long: map[string]bool{"adjustment": true}, numeric: true, flags: []string{"help", "version"}}),
		"ionice":   wrapOpts(optSpec{val: "cnpPu", long: map[string]bool{"class": true, "classdata": true, "pid": true, "pgid": true, "uid": true}, flags: []string{"ignore", "help", "version"}}),
		"stdbuf":   wrapOpts(optSpec{val: "ioe", long: map[string]bool{"input": true, "output": true, "error": true}, flags: []string{"help", "version"}}),
		"setsid":   wrapOpts(optSpec{flags: []string{"ctty", "fork", "wait", "help", "version"}}),
		"unbuffer": wrapOpts(optSpec{}),
		"chrt":     wrapOperands(optSpec{}, 1),
		"taskset":  wrapOperands(optSpec{}, 1),
		"timeout":  wrapOperands(optSpec{val: "sk", long: map[string]bool{"signal": true, "kill-after": true}, flags: []string{"foreground", "preserve-status", "verbose", "help", "version"}}, 1),
		"watch":    wrapWatch,
		"veto":     runVeto,
		"script":   wrapScript,
		"busybox":  wrapOpts(optSpec{}),
		"xargs":    wrapXargs,
		"parallel": wrapParallel,
		"sem":      wrapParallel,

		"bash": runShell, "sh": runShell, "zsh": runShell, "dash": runShell, "ksh": runShell, "fish": runShell,
		"ash": runShell, "mksh": runShell, "csh": runShell, "tcsh": runShell, "yash": runShell,
		"eval":   runEval,
		"source": runSource, ".": runSource,
		"node": runInterp, "nodejs": runInterp, "bun": runBun, "perl": runInterp, "ruby": runInterp,
		"php": runInterp, "lua": runInterp, "luajit": runInterp,
		"deno": runDeno,

		"rm":   runRm,
		"find": runFind,
		"git":  runGit,
		"dd":   runDd,

		"wipefs": destroyDisk, "shred": destroyDisk, "mke2fs": destroyDisk, "mkswap": destroyDisk,
		"fdisk": destroyDisk, "sfdisk": destroyDisk, "parted": destroyDisk, "blkdiscard": destroyDisk,

		"chmod": runChmod, "chown": runChmod, "chgrp": runChmod,
		"crontab":   runCrontab,
		"systemctl": runSystemctl,
		"launchctl": runLaunchctl,

		"cd": runCd, "pushd": runCd, "popd": runPopd,
		"read": runRead, "mapfile": runMapfile, "readarray": runMapfile, "shift": runShift,
		"alias": runAlias, "unalias": runUnalias,
		"printenv": runPrintenv, "set": runSet, "export": runSet, "compgen": runCompgen,

		"echo": runEcho, "printf": runPrintf,

		"curl": runCurl, "wget": runWget,
		"nc": runNetcat, "ncat": runNetcat, "netcat": runNetcat, "socat": runSocat,
		"telnet": runFirstHost, "ftp": runFirstHost, "sftp": runRemoteCopy,
		"ssh": runSSH, "scp": runRemoteCopy, "rsync": runRemoteCopy,
		"pip": runPipInstall, "pip3": runPipInstall, "uv": runUv, "pipx": runPipInstall, "poetry": runPipInstall,
		"npm": runPackageRunner, "pnpm": runPackageRunner, "yarn": runPackageRunner, "npx": runPackageRunner,
		"gem": runGem, "cargo": runCargo,
		"aws": runAws, "gsutil": runGsutil, "gcloud": runGsutil, "az": runAz, "rclone": runRclone, "gh": runGh,
		"go": runGo,

		"base64": runDecoder("d", "decode"), "base32": runDecoder("d", "decode"), "xxd": runDecoder("r", "revert"),
		"uudecode": alwaysDecode, "openssl": runOpensslNet,

		"ln":       runLn,
		"cp":       runCopy(false),
		"mv":       runCopy(true),
		"install":  runInstall,
		"tee":      runTee,
		"touch":    writesAll(optSpec{val: "dtr", long: map[string]bool{"date": true, "reference": true}}),
		"mkdir":    writesAll(optSpec{val: "m", long: map[string]bool{"mode": true}}),
		"rmdir":    writesAll(optSpec{}),
		"truncate": writesAll(optSpec{val: "sr", long: map[string]bool{"size": true, "reference": true}}),
		"mkfifo":   writesAll(optSpec{val: "m"}),
		"nano":     writesAll(optSpec{}), "ed": writesAll(optSpec{}),
		"gzip": runCompress, "gunzip": runCompress, "bzip2": runCompress, "bunzip2": runCompress, "xz": runCompress,
		"unxz": runCompress, "zstd": runCompress, "unzstd": runCompress,
		"sed":  runSed,
		"sort": runSort,
		"uniq": runUniq,
		"tar":  runTar, "bsdtar": runTar, "gtar": runTar,
		"cpio": runCpio, "rpm2cpio": runRpm2cpio, "7z": run7z, "7za": run7z, "7zr": run7z, "7zz": run7z,
		"zip":   runZip,
		"unzip": runUnzip,

		"grep":  readsAfterPattern(optSpec{val: "efmABCdD", long: map[string]bool{"regexp": true, "file": true, "max-count": true, "after-context": true, "before-context": true, "context": true, "include": true, "exclude": true, "exclude-dir": true, "exclude-from": true, "label": true, "devices": true, "directories": true, "binary-files": true}}, "e", "f"),
		"egrep": readsAfterPattern(optSpec{val: "efmABC"}, "e", "f"), "fgrep": readsAfterPattern(optSpec{val: "efmABC"}, "e", "f"),
		"rg": readsAfterPattern(optSpec{val: "efgtTmABCjMrE", long: map[string]bool{"regexp": true, "file": true, "glob": true, "iglob": true, "type": true, "type-not": true, "type-add": true, "max-count": true, "after-context": true, "before-context": true, "context": true, "threads": true, "max-depth": true, "replace": true, "encoding": true, "engine": true, "sort": true, "sortr": true, "pre": true, "pre-glob": true, "max-columns": true, "max-filesize": true, "ignore-file": true, "path-separator": true, "color": true, "colors": true}}, "e", "f"),
		"ag": readsAfterPattern(optSpec{val: "ABCGgm"}, "", ""), "ack": readsAfterPattern(optSpec{val: "ABCm"}, "", ""),
		"awk": runAwk, "gawk": runAwk, "mawk": runAwk, "nawk": runAwk,
		"jq": runJq(readsAfterPattern(optSpec{val: "fL", long: map[string]bool{"from-file": true, "indent": true}}, "", "f")),
		"yq": readsAfterPattern(optSpec{}, "", ""),
	}
	for name, spec := range readerSpecs {
		handlers[name] = readsAll(spec)
	}
	addRunners(handlers)
	handlerByName = handlers
}

// stage of a program as a pipeline source.
var fetchers = map[string]bool{"curl": true, "wget": true, "fetch": true, "aria2c": true, "http": true, "https": true,
	"nc": true, "ncat": true, "netcat": true, "socat": true, "ssh": true, "lynx": true, "links": true, "w3m": true}

// readerSpecs are the programs that read every operand, each with the
// options of its own that take a value: a flag (cat -n, wc -l, ls -l) is
// not given the next word.
var readerSpecs = func() map[string]optSpec {
	none := optSpec{}
	lines := optSpec{val: "nc", long: map[string]bool{"lines": true, "bytes": true}, numeric: true}
	sums := optSpec{}
	m := map[string]optSpec{
		"cat": none, "tac": {val: "s", long: map[string]bool{"separator": true}}, "rev": none, "wc": none,
		"nl":       {val: "bdfhilnsvw"},
		"head":     lines,
		"tail":     {val: "ncs", long: map[string]bool{"lines": true, "bytes": true, "pid": true, "sleep-interval": true, "max-unchanged-stats": true}, numeric: true},
		"less":     {val: "bhjkoOpPtTxyz#", long: map[string]bool{"pattern": true, "tag": true, "log-file": true}},
		"more":     {val: "n", numeric: true},
		"cut":      {val: "bcdf", long: map[string]bool{"bytes": true, "characters": true, "delimiter": true, "fields": true, "output-delimiter": true}},
		"paste":    {val: "d", long: map[string]bool{"delimiters": true}},
		"od":       {val: "AjNStw", long: map[string]bool{"address-radix": true, "skip-bytes": true, "read-bytes": true, "strings": true, "format": true, "width": true}},
		"hexdump":  {val: "efns"},
		"strings":  {val: "ntTe", long: map[string]bool{"bytes": true, "radix": true, "encoding": true, "target": true}, numeric: true},
		"file":     {val: "fmFP", long: map[string]bool{"files-from": true, "magic-file": true, "separator": true, "parameter": true}},
		"stat":     {val: "c", long: map[string]bool{"format": true, "printf": true}},
		"diff":     {val: "CUDFIxXSL", long: map[string]bool{"context": true, "unified": true, "ifdef": true, "show-function-line": true, "ignore-matching-lines": true, "exclude": true, "exclude-from": true, "starting-file": true, "label": true, "width": true, "tabsize": true, "line-format": true, "color": true, "palette": true}},
		"cmp":      {val: "in", long: map[string]bool{"ignore-initial": true, "bytes": true}},
		"comm":     {long: map[string]bool{"output-delimiter": true}},
		"fold":     {val: "w", long: map[string]bool{"width": true}},
		"fmt":      {val: "wpg", long: map[string]bool{"width": true, "prefix": true, "goal": true}, numeric: true},
		"column":   {val: "cslNOoRtEdWHT", long: map[string]bool{"separator": true, "output-separator": true, "table-columns": true}},
		"expand":   {val: "t", long: map[string]bool{"tabs": true}, numeric: true},
		"unexpand": {val: "t", long: map[string]bool{"tabs": true}, numeric: true},
		"iconv":    {val: "fto", long: map[string]bool{"from-code": true, "to-code": true, "output": true}},
		"zcat":     none, "bzcat": none, "xzcat": none, "zless": none,
		"bat":      {val: "lHmrd", long: map[string]bool{"language": true, "highlight-line": true, "map-syntax": true, "line-range": true, "style": true, "theme": true, "tabs": true, "wrap": true, "terminal-width": true, "color": true, "italic-text": true, "decorations": true, "paging": true, "pager": true}},
		"view":     {val: "cSTu"},
		"readlink": none, "realpath": {long: map[string]bool{"relative-to": true, "relative-base": true}},
		"ls":     {val: "IwT", long: map[string]bool{"ignore": true, "hide": true, "width": true, "tabsize": true, "format": true, "sort": true, "time": true, "time-style": true, "block-size": true, "color": true, "quoting-style": true, "indicator-style": true}},
		"du":     {val: "BdtX", long: map[string]bool{"block-size": true, "max-depth": true, "threshold": true, "exclude-from": true, "exclude": true, "time-style": true, "time": true, "files0-from": true}},
		"tree":   {val: "LPIo", long: map[string]bool{"filelimit": true, "timefmt": true, "sort": true, "charset": true}},
		"md5sum": sums, "sha1sum": sums, "sha224sum": sums, "sha256sum": sums, "sha384sum": sums, "sha512sum": sums,
		"b2sum": {val: "l", long: map[string]bool{"length": true}}, "cksum": {val: "al", long: map[string]bool{"algorithm": true, "length": true}},
	}
	return m
}()
