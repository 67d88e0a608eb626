package command_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/rules/command"
	"github.com/vetohq/veto/tools"
)

func privilegeGate(t *testing.T, cfg command.Config) *veto.Gate {
	t.Helper()
	cfg.Vars = map[string]string{"HOME": "/home/u"}
	cmds, err := command.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g, err := veto.NewGate(veto.Config{Tools: tools.Defaults(), Rules: cmds.Rules(), Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func decideBash(g *veto.Gate, src string) veto.Verdict {
	return g.Decide(ctx, &veto.Call{Tool: "Bash", Args: map[string]any{"command": src}, Cwd: "/work/ws"})
}

// shell.privileged lets exactly the listed privileged commands through,
// word for word after their wrappers; everything else stays refused.
func TestPrivilegedList(t *testing.T) {
	g := privilegeGate(t, command.Config{Privileged: []string{"sudo apt-get update", "sudo apt-get install -y *", "docker run --privileged ci/* *"}})
	for src, want := range map[string]string{
		"sudo apt-get update":                        "",
		"/usr/bin/sudo apt-get update":               "",
		"env A=1 nice sudo apt-get update":           "",
		"sudo apt-get update -o APT::X=1":            "privilege_escalation",
		"sudo apt-get upgrade":                       "privilege_escalation",
		"sudo apt-get install nginx":                 "privilege_escalation",
		"sudo apt-get install -y nginx curl":         "",
		"sudo apt-get install -y":                    "",
		"sudo apt-get install -y $PKG":               "privilege_escalation",
		"sudo -u root apt-get update":                "privilege_escalation",
		"sudo apt-get update && sudo su -":           "privilege_escalation",
		"su -c 'apt-get update'":                     "privilege_escalation",
		"docker run --privileged ci/builder make":    "",
		"docker run --privileged alpine sh":          "sandbox_escape",
		"sudo apt-get update; sudo git clean -fdx":   "git_destructive",
		"echo -oX | xargs sudo apt-get update":       "privilege_escalation",
		"echo nginx | xargs sudo apt-get install -y": "",
	} {
		v := decideBash(g, src)
		if v.Reason != want || v.Allowed != (want == "") {
			t.Errorf("%q: allowed=%v %s/%s, want %q", src, v.Allowed, v.Rule, v.Reason, want)
		}
	}
	if _, err := command.New(command.Config{Privileged: []string{"su* -"}}); err == nil {
		t.Error("a glob as the program was accepted")
	}
	if _, err := command.New(command.Config{Privileged: []string{"  "}}); err == nil {
		t.Error("an empty entry was accepted")
	}
}

// shell.privilege: ask makes the rule ask a person, and a denial by
// another rule still wins.
func TestPrivilegeAsks(t *testing.T) {
	g := privilegeGate(t, command.Config{AskPrivilege: true, Privileged: []string{"sudo apt-get update"}})
	for src, want := range map[string]string{
		"sudo apt-get install nginx": "ask",
		"sudo apt-get update":        "allow",
		"sudo rm -rf $X":             "deny",
		"LD_PRELOAD=/tmp/x.so ls":    "deny",
	} {
		v := decideBash(g, src)
		got := "deny"
		switch {
		case v.Allowed:
			got = "allow"
		case v.Ask:
			got = "ask"
		}
		if got != want {
			t.Errorf("%q: %s (%s/%s), want %s", src, got, v.Rule, v.Reason, want)
		}
	}
}

// The section's keys: only the user's file adds privileged commands or
// sets ask; a later file only shortens the list or sets deny.
func TestPrivilegeSettingsThroughTheFiles(t *testing.T) {
	for _, tc := range []struct {
		name       string
		files      []string
		privileged []string
		ask        bool
		problem    string
	}{
		{name: "the user's list and ask", files: []string{policy.KindUser, `shell: {privileged: ["sudo apt-get update", "sudo make install"], privilege: ask}`},
			privileged: []string{"sudo apt-get update", "sudo make install"}, ask: true},
		{name: "a project shortens the list and denies", files: []string{policy.KindUser, `shell: {privileged: ["sudo apt-get update", "sudo make install"], privilege: ask}`,
			policy.KindProject, `shell: {privileged: ["sudo make install", "sudo su -"], privilege: deny}`},
			privileged: []string{"sudo make install"}},
		{name: "a project cannot add to an empty list", files: []string{policy.KindProject, `shell: {privileged: ["sudo su -"]}`}, privileged: []string{}},
		{name: "a project cannot ask", files: []string{policy.KindProject, `shell: {privilege: ask}`}, problem: "only the user's policy may ask"},
		{name: "an unknown verdict", files: []string{policy.KindUser, `shell: {privilege: allow}`}, problem: `"allow" is not deny or ask`},
		{name: "a glob as the program", files: []string{policy.KindUser, `shell: {privileged: ["*"]}`}, problem: "must be written out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := merge(t, tc.files...)
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("err %v, want %q", err, tc.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := policy.Effective[command.Settings](p, command.ShellSection.Key)
			if len(got.Privileged) != len(tc.privileged) || !slices.Equal(got.Privileged, tc.privileged) && len(tc.privileged) > 0 || got.AskPrivilege != tc.ask {
				t.Errorf("privileged %q ask %v, want %q ask %v", got.Privileged, got.AskPrivilege, tc.privileged, tc.ask)
			}
		})
	}
}
