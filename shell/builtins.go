package shell

import "strings"

// Builtins that change what later commands see (cd, pushd, popd) or
// print the environment (printenv, set, export, compgen).

func runCd(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{}, true)
	if c.name == "pushd" {
		w.dirs = append(w.dirs, w.cwd)
	}
	if len(o.operands) == 0 {
		if c.name == "pushd" {
			w.cwd = ""
			return stage{}
		}
		w.chdir(lit("~"))
		return stage{}
	}
	w.chdir(o.operands[0])
	return stage{}
}

func runPopd(w *walker, c *cmd) stage {
	if n := len(w.dirs); n > 0 {
		w.cwd, w.dirs = w.dirs[n-1], w.dirs[:n-1]
		return stage{}
	}
	w.cwd = ""
	return stage{}
}

func envDump(w *walker, c *cmd) stage {
	w.r.find(RuleEnvDump, EnvDump, c.seg, "The command prints the environment, which holds secrets.")
	return stage{}
}

// runPrintenv is printenv: with no name it prints the environment; with
// names, only those. A name shaped like a secret's (a key, a token, a
// password, …), or one veto cannot read, is refused as an environment
// dump; HOME or PATH is not.
func runPrintenv(w *walker, c *cmd) stage {
	names := 0
	for _, a := range c.args {
		if a.unknown {
			return envDump(w, c)
		}
		if strings.HasPrefix(a.lit, "-") {
			continue
		}
		names++
		for _, v := range a.vals {
			if secretName(v) {
				return envDump(w, c)
			}
		}
	}
	if names == 0 {
		return envDump(w, c)
	}
	return stage{}
}

// runSet is set and export: with no arguments (or export -p) they print
// every variable.
func runSet(w *walker, c *cmd) stage {
	if c.name == "set" && w.setArgs(c) {
		return stage{}
	}
	if len(c.args) == 0 || (c.name == "export" && len(c.args) == 1 && c.args[0].lit == "-p") {
		return envDump(w, c)
	}
	return stage{}
}

func runCompgen(w *walker, c *cmd) stage {
	for i, a := range c.args {
		if a.lit == "-v" || a.lit == "-e" || (a.lit == "-A" && i+1 < len(c.args) && (c.args[i+1].lit == "variable" || c.args[i+1].lit == "export")) {
			return envDump(w, c)
		}
	}
	return stage{}
}
