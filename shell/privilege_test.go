package shell_test

import (
	"strings"
	"testing"

	"github.com/vetohq/veto/shell"
)

// reasonsOf is the reasons of a report's findings of one rule.
func reasonsOf(r *shell.Report, rule shell.Rule) string {
	var out []string
	for _, f := range r.Findings {
		if f.Rule == rule {
			out = append(out, string(f.Reason))
		}
	}
	return strings.Join(out, " ")
}

func TestPrivilegeFindings(t *testing.T) {
	const esc, root = "sandbox_escape", "privilege_escalation"
	for src, want := range map[string]string{
		"sudo -i":        root,
		"sudo -l":        "",
		"sudo --version": "",
		"sudo -k":        "",
		"xargs sudo rm":  root,
		"python3 -c 'import os; os.system(\"sudo id\")'":                      root,
		"ssh host 'sudo systemctl restart app'":                               root,
		"setpriv --no-new-privs make":                                         "",
		"setpriv --reuid=0 bash":                                              root,
		"setpriv --ambient-caps +sys_admin bash":                              root,
		"capsh --drop=cap_net_raw --":                                         "",
		"capsh --uid=0 --":                                                    root,
		"setcap -r ./x":                                                       "",
		"setcap cap_net_raw+p ./x":                                            root,
		"chmod u+s x":                                                         root,
		"chmod a+rs x":                                                        root,
		"chmod +s x":                                                          root,
		"chmod 04755 x":                                                       root,
		"chmod 6755 x":                                                        root,
		"chmod 2775 dir":                                                      "",
		"chmod g+s dir":                                                       "",
		"chmod u-s x":                                                         "",
		"chmod -R 755 x":                                                      "",
		"chmod 755 x":                                                         "",
		"chmod $MODE x":                                                       root,
		"install -m 0755 a /tmp/b":                                            "",
		"install --mode=4755 a /tmp/b":                                        root,
		"docker run -itv /:/h alpine sh":                                      esc,
		"docker run -it -v /etc:/etc:ro alpine sh":                            esc,
		"docker run -v ~/.ssh:/root/.ssh alpine sh":                           "",
		"docker run -v $HOME:/h alpine sh":                                    esc,
		"docker run -v data:/data alpine sh":                                  "",
		"docker run -v ./src:/src alpine sh":                                  "",
		"docker run -v \"$(pwd)\":/src alpine sh":                             "",
		"docker run -v `pwd`:/src alpine sh":                                  "",
		"docker run -v $X:/src alpine sh":                                     esc,
		"docker run alpine ls --privileged":                                   "",
		"docker run --privileged=false alpine sh":                             "",
		"docker --context prod run --privileged alpine sh":                    esc,
		"docker container run --privileged alpine sh":                         esc,
		"docker create --ipc=host alpine":                                     esc,
		"docker run --net=host alpine sh":                                     "",
		"docker run --cap-add=chown,kill alpine sh":                           "",
		"docker run --cap-add=CAP_SYS_PTRACE alpine sh":                       esc,
		"docker run --device /dev/sda:/dev/xvda alpine sh":                    esc,
		"docker run --device /dev/fuse alpine sh":                             "",
		"docker run --security-opt label=disable alpine":                      esc,
		"docker run --mount type=volume,source=data,target=/d alpine":         "",
		"docker run --mount type=bind,src=/var/run/docker.sock,dst=/s alpine": esc,
		"docker exec -it web sh":                                              "",
		"docker compose run --privileged app":                                 "",
		"kubectl run x --image=alpine --privileged":                           esc,
		"kubectl run x --image=alpine --overrides '{\"spec\":{\"hostPID\":true}}'": esc,
		"kubectl debug -it pod/web --image=busybox":                                "",
		"kubectl debug pod/web --profile sysadmin":                                 esc,
		"kubectl exec -it web -- sh":                                               "",
		"nsenter --help":                                                           "",
		"unshare --net ./test.sh":                                                  "",
		"unshare -Urn sh":                                                          esc,
		"unshare --map-user=0 sh":                                                  esc,
		"mount":                                                                    "",
		"mount -l -t ext4":                                                         "",
		"mount -a":                                                                 esc,
		"socat - UNIX-CONNECT:/run/containerd/containerd.sock":                     esc,
		"ls -l /var/run/docker.sock":                                               "",
		"chroot /srv/jail /bin/true":                                               esc,
		"docker run --cpu-rt-runtime 950000 --privileged alpine":                   esc,
		"docker run --some-new-opt a=b --privileged alpine":                        esc,
		"python3 -c 'print(\"sudo make install\")'":                                "",
		"python3 -c 'import logging; logging.info(\"run sudo -i\")'":               "",
		"python3 -c 'import subprocess; subprocess.run(\"sudo -i\", shell=True)'":  root,
		"node -e 'require(\"child_process\").execSync(\"sudo id\")'":               root,
		"machinectl shell root@":                                                   root,
		"machinectl list":                                                          "",
		"systemd-run --scope -p MemoryMax=1G make":                                 root,
		"systemd-run --user --scope make":                                          "",
		"usermod -aG docker agent":                                                 root,
		"gpasswd -a agent sudo":                                                    root,
		"useradd --help":                                                           "",
		"modprobe -n vfat":                                                         "",
		"insmod ./rootkit.ko":                                                      esc,
		"setenforce 0":                                                             esc,
		"setenforce 1":                                                             "",
		"pivot_root . old":                                                         esc,
		"podman unshare cat /etc/subuid":                                           esc,
		"podman images":                                                            "",
		"cat /proc/1/root/etc/hostname":                                            esc,
		"ls /proc/$PID/root/":                                                      esc,
		"cat /proc/1/status":                                                       "",
		"command -v sudo":                                                          "",
		"sg run -p 'foo($A)' src":                                                  "",
		"sg scan":                                                                  "",
		"sg docker -c id":                                                          root,
		"setcap -v cap_net_raw+p ./x":                                              "",
		"docker run -v /etc/localtime:/etc/localtime:ro alpine date":               "",
		"docker run -v /etc/shadow:/s:ro alpine cat /s":                            esc,
		"docker run -v /home/agent/proj:/src alpine ls":                            "",
		"docker run -v /home:/h alpine ls":                                         esc,
	} {
		if got := reasonsOf(shell.Analyze(src, env), shell.RulePrivilege); got != want {
			t.Errorf("%q: privilege findings %q, want %q", src, got, want)
		}
	}
}

// The command a privilege wrapper runs is judged as itself.
func TestPrivilegeWrappersJudgeTheirCommand(t *testing.T) {
	for _, src := range []string{"pkexec git reset --hard", "run0 -u root git reset --hard", "setpriv --reuid=0 git reset --hard",
		"nsenter -t 1 -m git reset --hard", "unshare -r git reset --hard", "chroot /mnt git reset --hard", "sg wheel -c 'git reset --hard'",
		"capsh --uid=0 -- -c 'git reset --hard'", "/lib64/ld-linux-x86-64.so.2 /usr/bin/git reset --hard"} {
		if got := reasonsOf(shell.Analyze(src, env), shell.RuleAnalyzer); got != "git_destructive" {
			t.Errorf("%q: analyzer findings %q, want git_destructive", src, got)
		}
	}
}

func TestInjectionFindings(t *testing.T) {
	const ld, gc, st = "loader_injection", "git_config_injection", "startup_injection"
	for src, want := range map[string]string{
		"LD_PRELOAD=/tmp/x.so ls":                                                 ld,
		"LD_PRELOAD=libasan.so ./t":                                               ld,
		"LD_PRELOAD=/usr/lib/../../tmp/x.so ls":                                   ld,
		"LD_PRELOAD=/usr/lib/libjemalloc.so:/lib/x.so ls":                         "",
		"LD_PRELOAD=\"$LD_PRELOAD /tmp/x.so\" ls":                                 ld,
		"LD_PRELOAD=\"$LD_PRELOAD\" ls":                                           "",
		"LD_PRELOAD=$(find / -name x.so) ls":                                      ld,
		"declare -x LD_AUDIT=./a.so":                                              ld,
		"env -i LD_PRELOAD=./x.so ls":                                             ld,
		"LD_LIBRARY_PATH=/tmp ls":                                                 "",
		"ld.so --preload /tmp/x.so /bin/ls":                                       ld,
		"/lib/ld-musl-x86_64.so.1 --list ./app":                                   "",
		"GIT_CONFIG_KEY_0=core.hooksPath git commit":                              gc,
		"GIT_CONFIG_VALUE_0=/tmp/h GIT_CONFIG_KEY_0=core.hooksPath git commit":    gc,
		"GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git commit": "",
		"GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git log; GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/tmp/h git log": gc,
		"GIT_CONFIG_KEY_0=include.path GIT_CONFIG_VALUE_0=/tmp/c git log":                                                                         gc,
		"GIT_CONFIG_KEY_0=credential.helper GIT_CONFIG_VALUE_0=store git push":                                                                    "",
		"GIT_CONFIG_KEY_0=$K GIT_CONFIG_VALUE_0=x git log":                                                                                        gc,
		"GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=$NAME git commit":                                                                          "",
		"GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=$P git log":                                                                               gc,
		"GIT_CONFIG_PARAMETERS=\"'core.hooksPath'='/tmp/h'\" git commit":                                                                          gc,
		"GIT_CONFIG_PARAMETERS=\"'color.ui=always'\" git log":                                                                                     "",
		"GIT_CONFIG_PARAMETERS=$P git log":                                                                                                        gc,
		"GIT_CONFIG=./c git log":                                                                                                                  gc,
		"GIT_CONFIG_SYSTEM= git log":                                                                                                              "",
		"GIT_EXEC_PATH=/usr/lib/git-core git":                                                                                                     "",
		"GIT_TEMPLATE_DIR=./t git init":                                                                                                           gc,
		"GIT_PAGER=$PAGER git log":                                                                                                                gc,
		"PAGER=less git log":                                                                                                                      "",
		"export EDITOR=$VISUAL":                                                                                                                   "",
		"BASH_ENV=/dev/null bash x.sh":                                                                                                            "",
		"BASH_ENV=$F bash x.sh":                                                                                                                   st,
		"ENV=~/.shrc sh -i":                                                                                                                       st,
		"ENV=prod ./deploy.sh":                                                                                                                    "",
		"NODE_OPTIONS=-r./x.js node a.js":                                                                                                         st,
		"NODE_OPTIONS='--loader ts-node/esm' node a.ts":                                                                                           st,
		"NODE_OPTIONS=--enable-source-maps node a.js":                                                                                             "",
		"PERL5OPT=-w perl x.pl":                                                                                                                   "",
		"PERL5OPT=-d:Trace perl x.pl":                                                                                                             st,
		"RUBYOPT=-rbundler/setup ruby x.rb":                                                                                                       st,
		"_JAVA_OPTIONS=-agentlib:jdwp=transport=dt_socket java -jar a.jar":                                                                        st,
		"JDK_JAVA_OPTIONS=-Xmx2g java -jar a.jar":                                                                                                 "",
		"PYTHONPATH=/tmp/evil python3 x.py":                                                                                                       "",
		"PYTHONSTARTUP=/tmp/x.py python3 x.py":                                                                                                    "",
		"LESSOPEN=$X less f":                                                                                                                      st,
		"env 'BASH_FUNC_ls%%=$X' bash -c ls":                                                                                                      "",
		"MANPAGER=$P man ls":                                                                                                                      "",
	} {
		if got := reasonsOf(shell.Analyze(src, env), shell.RuleInjection); got != want {
			t.Errorf("%q: injection findings %q, want %q", src, got, want)
		}
	}
}

// A program variable git runs is judged as the command it is, as git -c
// judges it.
func TestGitProgramVariablesAreJudged(t *testing.T) {
	for src, want := range map[string]string{
		"GIT_SSH_COMMAND='rm -rf $X' git fetch":                                               "rm_recursive_force",
		"GIT_EXTERNAL_DIFF='git clean -fdx' git diff":                                         "git_destructive",
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='reset --hard' git x": "git_destructive",
		"GIT_CONFIG_PARAMETERS=\"'alias.x=!git clean -fdx'\" git x":                           "git_destructive",
		"export GIT_PAGER='git stash clear'; git log":                                         "git_destructive",
		"GIT_EDITOR=true git commit":                                                          "",
		"LESSOPEN='|git clean -fdx %s' less f":                                                "git_destructive",
		"PS4='$(git reset --hard)' bash -x build.sh":                                          "git_destructive",
		"env 'BASH_FUNC_ls%%=() { git clean -fdx; }' bash -c ls":                              "git_destructive",
		"MANPAGER='git stash clear' man ls":                                                   "git_destructive",
		"LESSOPEN='| lesspipe %s' less f":                                                     "",
		"PS4='+ ${BASH_SOURCE}:${LINENO}: ' bash -x build.sh":                                 "",
		"GIT_EDITOR='code --wait' git commit":                                                 "",
	} {
		if got := reasonsOf(shell.Analyze(src, env), shell.RuleAnalyzer); got != want {
			t.Errorf("%q: analyzer findings %q, want %q", src, got, want)
		}
	}
}

// Findings say what kind of thing happens, never the command's words.
func TestPrivilegeMessagesQuoteNothing(t *testing.T) {
	for _, src := range []string{"sudo secretword123", "LD_PRELOAD=/tmp/secretword123.so ls", "docker run -v /:/secretword123 --privileged alpine",
		"GIT_CONFIG_GLOBAL=/tmp/secretword123 git log", "NODE_OPTIONS='-r secretword123' node"} {
		for _, f := range shell.Analyze(src, env).Findings {
			if strings.Contains(f.Message, "secretword123") {
				t.Errorf("%q: message %q quotes the command", src, f.Message)
			}
		}
	}
}
