package shell_test

import "testing"

// Issue 29: interpreter code idioms, egress spellings, persistence through
// links and archives. The commands are data: nothing runs them.

// TestAnalyzeCodeIdioms covers escapes in code's literals, pathlib's
// methods, the home directory named by an expression, whole-environment
// copies and addresses in code.
func TestAnalyzeCodeIdioms(t *testing.T) {
	runCases(t, env, []analyzeCase{
		// Escapes, decoded as the language reads them.
		{`python3 -c 'import os; os.system("\x72m -rf /tmp/x")'`, "rm:/tmp/x"},
		{`python3 -c 'import os; os.system("\u0072m -rf /tmp/x")'`, "rm:/tmp/x"},
		{`python3 -c 'import os; os.system("\162m -rf /tmp/x")'`, "rm:/tmp/x"},
		{`node -e 'require("child_process").execSync("\u{72}m -rf /tmp/x")'`, "rm:/tmp/x"},
		{`perl -e 'system("git reset --\x{68}ard")'`, "!git_destructive"},
		{`python3 -c 'import subprocess; subprocess.run(["git", "reset", "--h\x61rd"])'`, "!git_destructive"},
		{`python3 -c 'print(r"\x72m -rf /tmp/x")'`, ""}, // a raw string keeps its backslashes
		{`python3 -c 'print("\x41\x42")'`, ""},
		// pathlib: the method called on the path built.
		{`python3 -c 'from pathlib import Path; Path(".git/hooks/pre-commit").write_text("x")'`, "w:.git/hooks/pre-commit"},
		{`python3 -c 'import pathlib; pathlib.Path("/etc/hosts").write_bytes(b"x")'`, "w:/etc/hosts"},
		{`python3 -c 'from pathlib import Path; Path("/etc/passwd").unlink()'`, "w:/etc/passwd"},
		{`python3 -c 'from pathlib import Path; Path("~/.zshrc").expanduser().open("a").write("x")'`, "w:~/.zshrc"},
		{`python3 -c 'from pathlib import Path; Path("/etc/x").resolve().rename("y")'`, "w:/etc/x w:y"},
		{`python3 -c 'from pathlib import Path; print(Path("/etc/hostname").read_text())'`, "r:/etc/hostname"},
		{`python3 -c 'from pathlib import Path; Path("/etc/os-release").open().read()'`, "r:/etc/os-release"},
		// The home directory named by an expression.
		{`python3 -c 'import shutil; from pathlib import Path; shutil.rmtree(Path.home())'`, "rm:~"},
		{`python3 -c 'from pathlib import Path; (Path.home() / ".bashrc").write_text("x")'`, "w:.bashrc w:~/.bashrc"},
		{`python3 -c 'from pathlib import Path; (Path.home() / ".bashrc").read_text()'`, "r:.bashrc r:~/.bashrc"},
		{`node -e 'require("fs").rmSync(require("os").homedir(), {recursive: true})'`, "rm:~"},
		{`node -e 'require("fs").rmSync(process.env.HOME, {recursive: true})'`, "rm:~"},
		{`ruby -e 'require "fileutils"; FileUtils.rm_rf(Dir.home)'`, "rm:~"},
		{`perl -MFile::Path -e 'rmtree($ENV{HOME})'`, "rm:~"},
		{`node -e 'console.log(require("os").homedir())'`, ""},
		{`python3 -c 'from pathlib import Path; print(Path.home())'`, ""},
		// A relative literal is below the home directory only where it is
		// joined to it, or where the code changes directory.
		{`node -e 'require("fs").writeFileSync("out.json", JSON.stringify({home: require("os").homedir()}))'`, "w:out.json"},
		{`python3 -c 'import os; open(os.path.join(os.path.expanduser("~"), ".bashrc"), "a")'`, "w:~ w:.bashrc w:~/.bashrc"},
		{`python3 -c 'import os; os.chdir(os.path.expanduser("~")); open(".bashrc", "a")'`, "r:~ w:.bashrc w:~/.bashrc"},
		{`perl -e 'open(F, ">>", $ENV{HOME} . "/.bashrc")'`, "w:/.bashrc w:~/.bashrc"},
		// Whole-environment copies, but where handed to a child.
		{`python3 -c 'import os; print(os.environb)'`, "!env_dump"},
		{`python3 -c 'import os; print(os.environb[b"HOME"])'`, ""},
		{`python3 -c 'import os, json; print(json.dumps({**os.environ}))'`, "!env_dump"},
		{`python3 -c 'import os; print(dict(os.environ))'`, "!env_dump"},
		{`python3 -c 'import os, subprocess; subprocess.run(["make"], env={**os.environ, "CI": "1"})'`, ""},
		{`python3 -c 'import os, subprocess; subprocess.run(["make"], env=dict(os.environ, CI="1"))'`, ""},
		{`node -e 'console.log({...process.env})'`, "!env_dump"},
		{`node -e 'require("child_process").spawnSync("npm", ["test"], {env: {...process.env, CI: "1"}})'`, ""},
		// Addresses in code that connects.
		{`python3 -c 'import socket; socket.create_connection(("169.254.169.254", 80))'`, "h:169.254.169.254"},
		{`python3 -c 'import socket; socket.socket().connect(("fd00:ec2::254", 80, 0, 0))'`, "h:fd00:ec2::254"},
		{`node -e 'require("net").connect(80, "169.254.169.254")'`, "h:169.254.169.254"},
		{`python3 -c 'print("1.2.3.4")'`, ""},
		{`python3 -c 'import http.server; http.server.test(bind="0.0.0.0")'`, ""},
	})
}

// TestAnalyzeEgressSpellings covers where curl, wget and git are told to
// connect: --resolve, --connect-to, config files, proxies.
func TestAnalyzeEgressSpellings(t *testing.T) {
	runCases(t, env, []analyzeCase{
		{`curl --resolve a.example:80:169.254.169.254 http://a.example/`, "h:169.254.169.254 h:a.example"},
		{`curl --resolve 'a.example:443:[fd00:ec2::254],10.0.0.1' https://a.example/`, "h:[fd00:ec2::254] h:10.0.0.1 h:a.example"},
		{`curl --resolve a.example:443:fd00:ec2::254 https://a.example/`, "h:[fd00:ec2::254] h:a.example"},
		{`curl --resolve -a.example:443 https://a.example/`, "h:a.example"},
		{`curl --connect-to a.example:443:b.example:8443 https://a.example/`, "h:b.example h:a.example"},
		{`curl --connect-to ::169.254.169.254:80 http://a.example/`, "h:169.254.169.254 h:a.example"},
		{`curl --connect-to a.example:443:: https://a.example/`, "h:a.example"},
		{`curl --connect-to "$C" https://a.example/`, "h:? h:a.example"},
		{`curl -K - https://a.example/`, "h:? h:a.example"},
		{`curl --noproxy '*' https://a.example/`, "h:a.example"},
		{`curl --socks4a 10.1.1.1:1080 https://a.example/`, "h:10.1.1.1 h:a.example"},
		{`all_proxy=http://p.example:3128 curl https://a.example/`, "h:p.example h:a.example"},
		{`ftp_proxy=http://p.example curl ftp://a.example/`, "h:p.example h:a.example"},
		{`wget -e https_proxy=http://p.example https://a.example/`, "h:p.example h:a.example"},
		{`wget --execute 'use_proxy = on' https://a.example/`, "h:a.example"},
		{`wget --config=w.rc https://a.example/`, "r:w.rc h:? h:a.example"},
		{`git -c http.proxy=http://p.example clone https://a.example/r`, "h:p.example h:a.example"},
	})
}

// TestAnalyzeLinksAndArchives covers writes through a link made earlier
// in the command, and archives extracted where their members may land
// anywhere.
func TestAnalyzeLinksAndArchives(t *testing.T) {
	runCases(t, env, []analyzeCase{
		{`ln -s ~/.bashrc x && echo y >> x`, "t:~/.bashrc w:x w:x w:~/.bashrc"},
		{`ln -s .git/hooks h && cp s h/pre-commit`, "t:.git/hooks t:./.git/hooks t:h/.git/hooks w:h r:s w:h/pre-commit w:.git/hooks/pre-commit"},
		{`ln -s ~/.bashrc x && rm x`, "t:~/.bashrc w:x w:x"},
		{`ln -s ~/.ssh d && rm -r d/`, "t:~/.ssh w:d rm:d/ rm:~/.ssh"},
		{`ln -s ~/.bashrc x && cat x`, "t:~/.bashrc w:x r:x"},
		{`ln -s ../shared/c.json c.json && echo y >> c.json`, "t:../shared/c.json t:./../shared/c.json t:c.json/../shared/c.json w:c.json w:c.json w:../shared/c.json"},
		{`cp -s ~/.bashrc x && echo y >> x`, "r:~/.bashrc w:x w:x w:~/.bashrc"},
		{`cp -l ~/.profile p; echo y >> p`, "r:~/.profile w:p w:p w:~/.profile"},
		{`cp ~/.bashrc x && echo y >> x`, "r:~/.bashrc w:x w:x"},
		{`tar -xPf a.tar`, "!archive_anywhere r:a.tar w:."},
		{`tar --absolute-names -xf a.tar`, "!archive_anywhere r:a.tar w:."},
		{`tar xzf a.tgz`, "r:a.tgz w:."},
		{`tar -xf a.tar --transform 's,^,.git/hooks/,'`, "r:a.tar w:. w:.git/hooks"},
		{`tar -xf a.tar -C out --xform='s|^dist/|build/&|'`, "r:a.tar w:out w:out/build"},
		{`tar -xf a.tar --transform 's,^pkg,src,'`, "r:a.tar w:."},
		{`bsdtar -xf a.tar -s '#^#/.git/hooks/#'`, "r:a.tar w:. w:.git/hooks"},
		{`tar -xf a.tar --transform "$T"`, "r:a.tar w:. w:?"},
		{`bsdtar -xf a.tar -C ~/.ssh`, "r:a.tar w:~/.ssh"},
		{`cpio -idm < a.cpio`, "!archive_anywhere r:a.cpio w:."},
		{`cpio -idm --no-absolute-filenames -D out < a.cpio`, "r:a.cpio w:out"},
		{`cpio -it < a.cpio`, "r:a.cpio"},
		{`rpm2cpio p.rpm | cpio -idmv`, "r:p.rpm w:."},
		{`cat p.cpio | cpio -idmv`, "!archive_anywhere r:p.cpio w:."},
		{`unzip -: a.zip`, "!archive_anywhere r:a.zip w:."},
		{`unzip -o a.zip -d build`, "r:a.zip w:build"},
		{`7z x a.7z -o.git/hooks`, "r:a.7z w:.git/hooks"},
		{`7z x -spf a.7z`, "!archive_anywhere r:a.7z w:."},
		{`7z l a.7z`, ""},
		{`7z a out.7z src`, "w:out.7z t:src"},
	})
}
