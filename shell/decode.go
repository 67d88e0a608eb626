package shell

// What a pipeline stage gives a shell to run: the text echo and printf
// print, and what base64, xxd, openssl and uudecode decode.

import "strings"

// runEcho prints its arguments: the text is known when every argument is,
// and echo -e decodes escapes.
func runEcho(w *walker, c *cmd) stage {
	args := c.args
	decode := false
	for len(args) > 0 && !args[0].unknown && (args[0].lit == "-n" || args[0].lit == "-e" || args[0].lit == "-E" || args[0].lit == "-ne" || args[0].lit == "-en") {
		decode = decode || strings.Contains(args[0].lit, "e")
		args = args[1:]
	}
	text := joinWords(args)
	if text.unknown {
		return stage{}
	}
	if decode && strings.Contains(text.lit, `\`) {
		return stage{decode: true}
	}
	return stage{text: text.vals}
}

func runPrintf(w *walker, c *cmd) stage {
	if len(c.args) == 0 || c.args[0].unknown {
		return stage{}
	}
	f := c.args[0].lit
	if strings.Contains(f, `\`) || (strings.Contains(f, "%") && len(c.args) > 1) {
		return stage{decode: true}
	}
	return stage{text: []string{f}}
}

// runDecoder is a program that decodes with one of its flags.
func runDecoder(short, long string) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		o := parseOpts(c.args, optSpec{val: "w"}, false)
		for _, f := range o.operands {
			w.access(f, false, false)
		}
		if o.has(short, long) || (c.name == "base64" && o.has("D")) {
			return stage{decode: true}
		}
		return stage{}
	}
}

func alwaysDecode(w *walker, c *cmd) stage { return stage{decode: true} }

func runOpenssl(w *walker, c *cmd) stage {
	for _, a := range c.args {
		if a.lit == "-d" || a.lit == "-base64" || a.lit == "base64" {
			return stage{decode: true}
		}
	}
	return stage{}
}
