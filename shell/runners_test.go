package shell_test

import (
	"strings"
	"testing"

	"github.com/vetohq/veto/shell"
)

// Programs that run other programs (issue 29). Data only: nothing here
// runs a command.

func TestAnalyzeRunners(t *testing.T) {
	runCases(t, env, []analyzeCase{
		// sed
		{`sed -n '1e crontab -r' a`, "!crontab_remove r:a"},
		{`sed 's/.*/x/e' a`, "!cannot_vouch r:a"},
		{`sed 's/a/b/w out.txt' a`, "w:out.txt r:a"},
		{`sed -n '/x/w /etc/cron.d/x' a`, "w:/etc/cron.d/x r:a"},
		{`sed -i "s/$OLD/$NEW/g" a`, "r:a w:a"},
		{`sed "$SCRIPT" a`, "!cannot_vouch r:a"},
		{`sed "s/a/b/;$MORE" a`, "!cannot_vouch r:a"},
		{`sed "w $OUT" a`, "w:? r:a"},
		{`sed '/^exec/{s/exec/run/;s/e$/E/}' a`, "r:a"},
		{`sed -e :a -e '$!N;s/\n//;ta' a`, "r:a"},
		{`sed '1i #!/bin/sh' a`, "r:a"},
		{`sed 'y/abc/xyz/' a`, "r:a"},
		{"sed '/x/a\\\nwrite this /etc/x' a", "r:a"},
		{"sed '/x/a\\\nfirst\\\nw /etc/x' a", "r:a"},
		{"sed '/x/a\\\nfirst\nw /etc/x' a", "w:/etc/x r:a"},
		// tar
		{`tar -cf x.tar a --checkpoint=1 --checkpoint-action=exec='crontab -r'`, "!crontab_remove w:x.tar t:a"},
		{`tar --checkpoint-action=dot -cf x.tar a`, "w:x.tar t:a"},
		{`tar -xf x.tar --to-command='crontab -r'`, "!crontab_remove r:x.tar w:."},
		{`tar -I 'crontab -r' -cf x.tar a`, "!crontab_remove w:x.tar t:a"},
		{`tar -I zstd -cf x.tar a`, "w:x.tar t:a"},
		{`tar -I "$Z" -cf x.tar a`, "!cannot_vouch w:x.tar t:a"},
		// zip
		{`zip -T -TT 'crontab -r' x.zip a`, "!crontab_remove w:x.zip r:a"},
		{`zip --unzip-command='crontab -r' x.zip a`, "!crontab_remove w:x.zip r:a"},
		// rsync, scp, ssh
		{`rsync -e 'crontab -r' a h:b`, "!crontab_remove r:a h:h"},
		{`rsync -e 'ssh -p 2222' a h:b`, "r:a h:h"},
		{`rsync --rsync-path='sudo rsync' a h:b`, "!privilege_escalation r:a h:h"},
		{`scp -S ./myssh a h:b`, "r:a h:h"},
		{`ssh -o ProxyCommand='crontab -r' h`, "!crontab_remove h:h"},
		{`ssh -o 'ProxyCommand crontab -r' h`, "!crontab_remove h:h"},
		{`ssh -oLocalCommand=crontab\ -r h`, "!crontab_remove h:h"},
		{`ssh -o ProxyCommand=none h`, "h:h"},
		{`ssh -o RemoteCommand='rm -rf /srv' h`, "!rm_recursive_force h:h"},
		{`scp -o ProxyCommand='crontab -r' a h:b`, "!crontab_remove r:a h:h"},
		// editors
		{`vim -c '!crontab -r' a`, "!crontab_remove w:a"},
		{`vim '+silent !crontab -r' a`, "!crontab_remove w:a"},
		{`vim -c 'r !crontab -r' a`, "!crontab_remove w:a"},
		{`vim -c 'w !crontab -r' a`, "!crontab_remove w:a"},
		{`vim -c 'w! b' a`, "w:a"},
		{`vim -c 'set ft=go | !crontab -r' a`, "!crontab_remove w:a"},
		{`vim -c 'call system("crontab -r")' a`, "!crontab_remove w:a"},
		{`vim -c 'terminal crontab -r'`, "!crontab_remove"},
		{`vim -c '%!sort' a`, "w:a"},
		{`vim -c 'wq' +42 a`, "w:a"},
		{`vim -c "$X" a`, "!cannot_vouch w:a"},
		{`emacs --batch --eval '(shell-command "crontab -r")'`, "!crontab_remove !crontab_remove"},
		// sqlite3
		{`sqlite3 db '.shell crontab -r'`, "!crontab_remove r:db"},
		{`sqlite3 db ".once '|crontab -r'" 'select 1;'`, "!crontab_remove r:db"},
		{`sqlite3 db '.once out.csv' 'select 1;'`, "r:db w:out.csv"},
		{`sqlite3 db '.load ./x.so'`, "!cannot_vouch r:db"},
		{`sqlite3 db "SELECT * FROM t WHERE id = $ID"`, "r:db"},
		{`sqlite3 db "$SQL"`, "!cannot_vouch r:db"},
		{`sqlite3 db <<< '.system crontab -r'`, "!crontab_remove r:db"},
		{`sqlite3 db < schema.sql`, "r:schema.sql r:db"},
		{`gen | sqlite3 db`, "!cannot_vouch r:db"},
		// gdb, man, R
		{`gdb -batch -ex 'shell crontab -r'`, "!crontab_remove"},
		{`gdb -ex '!crontab -r'`, "!crontab_remove"},
		{`gdb -ex 'call system("crontab -r")' -p 1`, "!crontab_remove"},
		{`gdb -batch -ex run --args crontab -r`, "!crontab_remove"},
		{`gdb -batch -ex bt ./srv core`, ""},
		{`man -P 'crontab -r' ls`, "!crontab_remove"},
		{`less '+!crontab -r' a`, "!crontab_remove r:a"},
		{`less +G a`, "r:a"},
		{`less -R +F log.txt`, "r:log.txt"},
		{`Rscript -e 'system("crontab -r")'`, "!crontab_remove"},
		{`R -e 'system2("crontab", "-r")'`, "!crontab_remove !crontab_remove w:/var/spool/cron/crontabs/agent"},
		// git
		{`git rebase --exec 'crontab -r' main`, "!crontab_remove"},
		{`git rebase -x 'go test ./...' main`, ""},
		{`git submodule foreach 'crontab -r'`, "!crontab_remove"},
		{`git submodule foreach --recursive git status`, ""},
		{`git bisect run crontab -r`, "!crontab_remove"},
		{`git filter-branch --index-filter 'crontab -r' HEAD`, "!crontab_remove"},
		{`git difftool -x 'crontab -r'`, "!crontab_remove"},
		{`git clone --upload-pack='crontab -r' ./r x`, "!crontab_remove"},
		{`git clone 'ext::sh -c x' r`, "!cannot_vouch"},
		{`git fetch -u origin`, ""},
		// at
		{`echo 'crontab -r' | at now`, "!crontab_remove"},
		{`at -f job.sh now`, "r:job.sh"},
		{`at -l`, ""},
		{`at now`, ""},
		// wrappers
		{`flock /tmp/l crontab -r`, "!crontab_remove"},
		{`flock -c 'crontab -r' /tmp/l`, "!crontab_remove"},
		{`flock -n /tmp/l make`, ""},
		{`strace -o trace.txt -f crontab -r`, "!crontab_remove w:trace.txt"},
		{`systemd-run --user -p MemoryMax=1G crontab -r`, "!crontab_remove"},
		{`sg docker 'crontab -r'`, "!privilege_escalation !crontab_remove"},
		{`nsenter -t 1 -m crontab -r`, "!sandbox_escape !crontab_remove"},
		{`perf record -g -- crontab -r`, "!crontab_remove"},
		{`perf report`, ""},
		{`poetry run crontab -r`, "!crontab_remove"},
		{`poetry install`, ""},
		{`uv run crontab -r`, "!crontab_remove"},
		{`uv run pytest`, ""},
		{`direnv exec /tmp crontab -r`, "!crontab_remove"},
		{`aws-vault exec prod -- crontab -r`, "!crontab_remove"},
		{`cmake -E rm -rf /opt/x`, "rm:/opt/x"},
		{`cmake -E remove_directory build`, "rm:build"},
		{`cmake -E chdir /tmp crontab -r`, "!crontab_remove"},
		{`cmake -E env FOO=1 crontab -r`, "!crontab_remove"},
		{`cmake --build build`, ""},
		{`npx rimraf /opt/x`, "rm:/opt/x"},
		{`npx -y rimraf@5 build`, "rm:build"},
		{`npm exec -- rimraf /opt/x`, "rm:/opt/x"},
		{`pnpm dlx rimraf /opt/x`, "rm:/opt/x"},
		{`yarn dlx rimraf /opt/x`, "rm:/opt/x"},
		{`bunx rimraf /opt/x`, "rm:/opt/x"},
		{`npx -c 'crontab -r'`, "!crontab_remove"},
		{`npx @scope/tool@1 x`, ""},
		{`npm install rimraf`, ""},
		{`fd -e pyc -x rm -rf`, "!rm_recursive_force"},
		{`fd -e go -x gofmt -w`, ""},
		{`hyperfine 'crontab -r'`, "!crontab_remove"},
		{`nix-shell --run 'crontab -r'`, "!crontab_remove"},
		{`nix develop -c crontab -r`, "!crontab_remove"},
		{`nodemon -x 'crontab -r'`, "!crontab_remove"},
		{`watchexec -e go -- crontab -r`, "!crontab_remove"},
		{`tmux new -d 'crontab -r'`, "!crontab_remove"},
		{`screen -dmS x crontab -r`, "!crontab_remove"},
		{`screen -ls`, ""},
		{`entr -s 'crontab -r'`, "!crontab_remove"},
		// database clients, lldb, more interpreters
		{`psql -c '\! crontab -r'`, "!crontab_remove"},
		{`psql -c "\copy t to program 'crontab -r'"`, "!crontab_remove"},
		{`psql -c '\o |crontab -r'`, "!crontab_remove"},
		{`psql -c 'select 1'`, ""},
		{`psql -c "$Q"`, "!cannot_vouch"},
		{`mysql -e 'system crontab -r'`, "!crontab_remove"},
		{`mysql -u root -e '\! crontab -r'`, "!crontab_remove"},
		{`mysql -e 'SHOW DATABASES; SELECT 1'`, ""},
		{`mysql -e 'SELECT 1; system crontab -r'`, "!crontab_remove"},
		{`echo '\! crontab -r' | psql`, "!crontab_remove"},
		{`lldb -o 'platform shell crontab -r'`, "!crontab_remove"},
		{`lldb -o 'bt' ./a.out`, ""},
		{"julia -e 'run(`crontab -r`)'", "!crontab_remove"},
		{`octave --eval 'system("crontab -r")'`, "!crontab_remove"},
		// unknown programs
		{`sometool --exec 'crontab -r'`, "!crontab_remove"},
		{`sometool --exec="$X"`, "!cannot_vouch"},
		{`sometool --post-hook='crontab -r'`, "!crontab_remove"},
		{`sometool -c 'crontab -r'`, "!crontab_remove"},
		{`sometool -c config.yml`, ""},
		{`sometool -e 'a|b'`, ""},
		{`sometool -x '(a|b'`, ""},
		{`sometool 'sh -c "crontab -r"'`, "!crontab_remove"},
		{`sometool 'crontab -r'`, "!crontab_remove"},
		{`sometool --title 'crontab -r is gone'`, ""},
		{`sometool --verbose crontab -r`, "!crontab_remove"},
		{`sometool rm -f x`, ""},
		{`docker rm -f web`, ""},
		{`docker run img sh -c 'crontab -r'`, "!crontab_remove"},
		{`docker run img sh -c 'rm -rf /srv'`, ""},
		{`kubectl exec web -- sh -c 'cat /etc/x'`, ""},
		{`psql -c 'DROP TABLE x; SELECT 1'`, ""},
		{`make -j2 CFLAGS='-O2 -g' test`, ""},
	})
}

// FuzzRunners holds that the little languages veto reads for the commands
// they run (sed scripts, ex commands, sqlite3's and psql's meta-commands,
// gdb's commands, an unknown program's --exec) never make the analyzer
// panic or hang, whatever the text.
func FuzzRunners(f *testing.F) {
	for _, s := range []string{`1e x`, `s/a/b/w f`, `a\`, `\`, `s\a\b\`, `/x/{w f`, `!x`, `silent! !x | y`, `.once '|x`,
		`\! x`, `\o |x`, `program '`, `shell x`, `system2(`, `g/x/!y`, `r !x`} {
		f.Add(s)
	}
	forms := []string{`sed -e %s x`, `vim -c %s`, `sqlite3 db %s`, `psql -c %s`, `mysql -e %s`, `gdb -ex %s`,
		`sometool --exec %s`, `R -e %s`, `sometool %s`, `tar --checkpoint-action=exec=%s -cf x y`, `ssh -o %s h`}
	f.Fuzz(func(t *testing.T, arg string) {
		for _, form := range forms {
			shell.Analyze(strings.Replace(form, "%s", singleQuoted(arg), 1), env)
		}
	})
}
