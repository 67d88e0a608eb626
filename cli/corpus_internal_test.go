package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var updateScores = flag.Bool("update-scores", false, "rewrite the after column of testdata/corpus/scores.tsv")

// corpusScore is one file's row of testdata/corpus/scores.tsv: how many
// cases it holds, how many of them are harmless (want allow), and how
// many the default policy decided as the case wants before the work that
// the file was written for and after it.
type corpusScore struct {
	file                           string
	cases, harmless, before, after int
}

const scoresPath = "../testdata/corpus/scores.tsv"

func readScores(t *testing.T) (header string, rows []corpusScore) {
	t.Helper()
	f, err := os.Open(scoresPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "file\t") || line == "" {
			header += line + "\n"
			continue
		}
		fs := strings.Split(line, "\t")
		if len(fs) != 5 {
			t.Fatalf("scores.tsv: want 5 columns: %q", line)
		}
		r := corpusScore{file: fs[0]}
		for i, p := range []*int{&r.cases, &r.harmless, &r.before, &r.after} {
			if *p, err = strconv.Atoi(fs[i+1]); err != nil {
				t.Fatalf("scores.tsv: %q: %v", line, err)
			}
		}
		rows = append(rows, r)
	}
	return header, rows
}

// TestOwnCorpus decides every case of testdata/corpus (the format of
// veto test: dangerous calls want deny, harmless ones allow) with the
// default policy, file by file, and holds each file's score to the after
// column of scores.tsv: a case that starts failing, or one that starts
// passing without the table saying so, fails the test. A harmless case
// refused is always a failure: the corpus admits no false denial.
func TestOwnCorpus(t *testing.T) {
	header, rows := readScores(t)
	files, err := testFiles("../testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	byFile := map[string]*corpusScore{}
	for i := range rows {
		byFile[rows[i].file] = &rows[i]
	}
	total, passed, harmless := 0, 0, 0
	for _, p := range files {
		name := filepath.Base(p)
		row := byFile[name]
		if row == nil && *updateScores {
			// A new file: its score now is its score before.
			rows = append(rows, corpusScore{file: name, before: -1})
			byFile = map[string]*corpusScore{}
			for i := range rows {
				byFile[rows[i].file] = &rows[i]
			}
			row = byFile[name]
		}
		if row == nil {
			t.Errorf("%s has no row in scores.tsv (run with -update-scores to add it with its score before)", name)
			continue
		}
		tf, err := readTestFile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		ok, harm := 0, 0
		for i, tc := range tf.Cases {
			if tc.Want.Verdict == "allow" {
				harm++
			}
			msg := runCase(context.Background(), p, tf.Policy, tc)
			if msg == "" {
				ok++
				continue
			}
			if tc.Want.Verdict == "allow" {
				t.Errorf("%s: case %d %q: a harmless call refused: %s", name, i+1, tc.Name, msg)
			} else if testing.Verbose() {
				t.Logf("%s: case %d %q: %s", name, i+1, tc.Name, msg)
			}
		}
		if !*updateScores && (len(tf.Cases) != row.cases || harm != row.harmless) {
			t.Errorf("%s: %d cases, %d harmless; scores.tsv says %d and %d", name, len(tf.Cases), harm, row.cases, row.harmless)
		}
		if *updateScores {
			row.cases, row.harmless, row.after = len(tf.Cases), harm, ok
			if row.before < 0 {
				row.before = ok
			}
		} else if ok != row.after {
			t.Errorf("%s: %d of %d decided as wanted; scores.tsv says %d (run with -update-scores once the change is meant)", name, ok, len(tf.Cases), row.after)
		}
		total, passed, harmless = total+len(tf.Cases), passed+ok, harmless+harm
	}
	t.Logf("own corpus: %d of %d decided as wanted (%d harmless)", passed, total, harmless)
	if *updateScores {
		var b strings.Builder
		b.WriteString(header)
		for _, r := range rows {
			fmt.Fprintf(&b, "%s\t%d\t%d\t%d\t%d\n", r.file, r.cases, r.harmless, r.before, r.after)
		}
		if err := os.WriteFile(scoresPath, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
