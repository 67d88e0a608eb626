package shell

import (
	"slices"
	"strings"
)

// optSpec says which options of a program take a value.
type optSpec struct {
	val     string          // short options that take a value (attached or next)
	long    map[string]bool // long options that take a value
	numeric bool            // "-5" style numeric options (nice, head)
	// flags are the program's long options that take no value. A spec
	// that lists them knows every long option of its program (these and
	// long's), so an abbreviation is read as getopt_long reads it: any
	// unambiguous prefix (--recur is --recursive). Without them, veto does
	// not know the full list and leaves names as written.
	flags []string
}

// longName is the long option an abbreviated name stands for, among
// longs: the name itself when it is one, else the only option it is a
// prefix of. A prefix of several is ambiguous (getopt_long and git refuse
// it); veto reads it as the first of them in longs, which lists the
// options it judges first, so an ambiguous --forc is still --force.
func longName(name string, longs []string) string {
	if name == "" || slices.Contains(longs, name) {
		return name
	}
	for _, l := range longs {
		if strings.HasPrefix(l, name) {
			return l
		}
	}
	return name
}

// expandLongs returns args with each abbreviated long option (before
// "--") spelt in full, among longs: --har is --hard.
func expandLongs(args []word, longs []string) []word {
	var out []word
	for i, a := range args {
		if a.unknown || len(a.vals) != 1 || !strings.HasPrefix(a.lit, "--") {
			continue
		}
		if a.lit == "--" {
			break
		}
		name, val, hasVal := strings.Cut(a.lit[2:], "=")
		full := longName(name, longs)
		if full == name {
			continue
		}
		if out == nil {
			out = slices.Clone(args)
		}
		s := "--" + full
		if hasVal {
			s += "=" + val
		}
		out[i] = lit(s)
		out[i].src = a.src
	}
	if out == nil {
		return args
	}
	return out
}

// longName is name spelt in full among the spec's long options.
func (spec optSpec) longName(name string) string {
	if slices.Contains(spec.flags, name) || spec.long[name] {
		return name
	}
	for _, l := range spec.flags {
		if strings.HasPrefix(l, name) {
			return l
		}
	}
	full := name
	for l := range spec.long {
		if strings.HasPrefix(l, name) && (full == name || l < full) {
			full = l // the first in order, whatever the map's
		}
	}
	return full
}

// opts is a parsed command line: the options seen (by name, without
// dashes; a short option's value under its letter), and the operands.
type opts struct {
	set      []optValue        // the last value of each option, in the order first given (setOpt, lookup)
	setIndex map[string]int    // set's index by name, once set is long
	vals     map[string][]word // every value each option was given, in order, as the words they were
	operands []word
	dashdash bool // operands came after "--"
	unknown  bool // a word that could not be evaluated was met among the options
}

// optValue is an option's last value.
type optValue struct{ name, val string }

// lookup is the last value of option n.
func (o *opts) lookup(n string) (string, bool) {
	if o.setIndex != nil {
		if i, ok := o.setIndex[n]; ok {
			return o.set[i].val, true
		}
		return "", false
	}
	for i := range o.set {
		if o.set[i].name == n {
			return o.set[i].val, true
		}
	}
	return "", false
}

func (o *opts) has(names ...string) bool {
	for _, n := range names {
		if _, ok := o.lookup(n); ok {
			return true
		}
	}
	return false
}

// all returns every value given to the options names, in order. A value
// veto could not know statically is an unknown word, never "".
func (o *opts) all(names ...string) []word {
	var out []word
	for _, n := range names {
		out = append(out, o.vals[n]...)
	}
	return out
}

func (o *opts) get(names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := o.lookup(n); ok {
			return v, true
		}
	}
	return "", false
}

// tails is the value attached to an option in a (--name=value, -dvalue):
// every value a may have, past prefix; unknown when one does not start so.
func tails(a word, prefix string) word {
	out := word{lit: strings.TrimPrefix(a.lit, prefix)}
	for _, v := range a.vals {
		t, ok := strings.CutPrefix(v, prefix)
		if !ok {
			return word{unknown: true}
		}
		out.vals = append(out.vals, t)
	}
	return out
}

// setOpt records val as option name's last value. A few options are
// looked up in a slice; past 16, by a map.
func (o *opts) setOpt(name, val string) {
	if o.setIndex != nil {
		if i, ok := o.setIndex[name]; ok {
			o.set[i].val = val
			return
		}
		o.setIndex[name] = len(o.set)
		o.set = append(o.set, optValue{name, val})
		return
	}
	for i := range o.set {
		if o.set[i].name == name {
			o.set[i].val = val
			return
		}
	}
	o.set = append(o.set, optValue{name, val})
	if len(o.set) > 16 {
		o.setIndex = make(map[string]int, len(o.set))
		for i, v := range o.set {
			o.setIndex[v.name] = i
		}
	}
}

func (o *opts) addVal(name string, x word) {
	if o.vals == nil {
		o.vals = map[string][]word{}
	}
	o.vals[name] = append(o.vals[name], x)
}

// parseOpts reads options from args. With stopAtOperand, the first operand
// ends the options (wrappers: what follows is the command); otherwise
// options and operands may mix, as GNU tools allow.
func parseOpts(args []word, spec optSpec, stopAtOperand bool) opts {
	var o opts // its maps are made at their first option: most commands have few
	operand := func(a word, i int) {
		if o.operands == nil {
			o.operands = make([]word, 0, len(args)-i)
		}
		o.operands = append(o.operands, a)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.unknown {
			if stopAtOperand {
				o.operands = args[i:]
				return o
			}
			operand(a, i)
			continue
		}
		s := a.lit
		switch {
		case s == "--":
			o.operands = append(o.operands, args[i+1:]...)
			o.dashdash = true
			return o
		case strings.HasPrefix(s, "--"):
			written, val, hasVal := strings.Cut(s[2:], "=")
			name := written
			if spec.flags != nil {
				name = spec.longName(name)
			}
			switch {
			case hasVal:
				o.addVal(name, tails(a, "--"+written+"="))
			case spec.long[name] && i+1 < len(args):
				i++
				val = args[i].lit
				o.addVal(name, args[i])
			}
			o.setOpt(name, val)
		case len(s) > 1 && s[0] == '-':
			if spec.numeric && isDigits(s[1:]) {
				o.setOpt("#", s[1:])
				continue
			}
			for j := 1; j < len(s); j++ {
				f := s[j : j+1]
				if strings.Contains(spec.val, f) {
					v := s[j+1:]
					vw := tails(a, s[:j+1])
					if v == "" && i+1 < len(args) {
						i++
						v, vw = args[i].lit, args[i]
					}
					o.setOpt(f, v)
					o.addVal(f, vw)
					break
				}
				o.setOpt(f, "")
			}
		default:
			if stopAtOperand {
				o.operands = args[i:]
				return o
			}
			operand(a, i)
		}
	}
	return o
}
