package shell

import (
	"os"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// paramsByWalk is what paramsOf must find: every ParamExp syntax.Walk
// meets, in its order.
func paramsByWalk(f *syntax.File) []string {
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		if p, ok := n.(*syntax.ParamExp); ok && p.Param != nil {
			out = append(out, p.Param.Value)
		}
		return true
	})
	return out
}

func TestParamsOfAsWalk(t *testing.T) {
	srcs := []string{
		`a=$x b[$i]=${y:-$z}; c=($p "${q[@]}" [$k]=$v); cmd "$A" ${B#$C} ${D/$E/$F} ${G:$H:$I} 2>"$J" <<< $K`,
		`if [[ $a == "$b" && -n ${c} ]]; then (( d += $e )); elif $f; then :; else let g=$h; fi`,
		`for i in $l "$m"; do echo $i; done; for ((j=$n; j<$o; j++)); do :; done; while read -r $p; do :; done < <(cat $q)`,
		`case $r in $s|"$t") echo $u;; *) echo $(echo $v) ` + "`echo $w`" + `;; esac`,
		`f() { local x=$1; declare -a y=($2); echo ${#y[@]} $(( $3 + ${4:-0} )); }; time f $5 | tee $6`,
		"cat <<EOF\n$A ${B} $(echo $C)\nEOF\ncoproc c { echo $D; }; echo @(a|$E) ${F^^} ${!G} ${H[$I]}",
		`{ echo $a; } && ! echo $b || [ -f $c ]; export $d=$e; echo $'\n'$f "$(( $g ))"`,
	}
	hand := len(srcs)
	if raw, err := os.ReadFile("testdata/oneliners.txt"); err == nil {
		srcs = append(srcs, strings.Split(string(raw), "\n")...)
	}
	if raw, err := os.ReadFile("testdata/deploy.sh"); err == nil {
		srcs = append(srcs, string(raw))
	}
	for i, src := range srcs {
		f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
		if err != nil {
			if i < hand {
				t.Errorf("%q: %v", src, err)
			}
			continue
		}
		want := paramsByWalk(f)
		if got := paramsOf(f, nil); !slices.Equal(got, want) {
			t.Errorf("%q: paramsOf %q, syntax.Walk %q", src, got, want)
		}
	}
}
