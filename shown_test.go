package veto_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/vetohq/veto"
)

// TestMaskSecretsMasksKnownFormats: every known token format, a PEM
// private key, a secret's assignment or option, and a long random string
// are masked where they stand, whatever is around them; ordinary words,
// paths, URLs and short numbers are left as they are.
func TestMaskSecretsMasksKnownFormats(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		masked         int
	}{
		{"github classic", "git push https://x:ghp_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78@github.com/o/r", "git push https://x:[masked]@github.com/o/r", 1},
		{"github fine-grained", "export GH=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "export GH=[masked]", 1},
		{"openai", "curl -H 'Authorization: Bearer sk-proj-abcdefghij0123456789ABCD' https://api.example.com", "curl -H 'Authorization: Bearer [masked]' https://api.example.com", 1},
		{"aws", "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", "aws configure set aws_access_key_id [masked]", 1},
		{"slack", "post xoxb-123456789012-abcdefghijkl to it", "post [masked] to it", 1},
		{"veto", "veto token revoke veto_0123456789abcdef0123", "veto token revoke [masked]", 1},
		{"jwt", "auth eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2ln end", "auth [masked] end", 1},
		{"pem", "echo '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----' > k", "echo '[masked: private key]' > k", 1},
		{"pem cut short", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow", "[masked: private key]", 1},
		{"certificate kept", "-----BEGIN CERTIFICATE-----", "-----BEGIN CERTIFICATE-----", 0},
		{"assignment", "PGPASSWORD=hunter2 psql", "PGPASSWORD=[masked] psql", 1},
		{"option", "mysql --password hunter2 -u root", "mysql --password [masked] -u root", 1},
		{"high entropy", "key Zx9qL2mN8vB4cR7tY1wE5uI3oP6aS0dF", "key [masked]", 1},
		{"ordinary", "make deploy staging && go test ./...", "make deploy staging && go test ./...", 0},
		{"a path", "cat /home/ann/project123/src/build2024/output.txt", "cat /home/ann/project123/src/build2024/output.txt", 0},
		{"a url", "curl https://docs.example.org/v2/page?id=42", "curl https://docs.example.org/v2/page?id=42", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, n := veto.MaskSecrets(c.in)
			if got != c.want || n != c.masked {
				t.Fatalf("MaskSecrets(%q) = %q, %d; want %q, %d", c.in, got, n, c.want, c.masked)
			}
		})
	}
}

// TestShowCallMasksAndOrdersByRole: a call is shown with its roles first
// (the command, then the path), a secret's argument masked by its name,
// the content of a write to a credential file masked whole, the hosts of
// its URLs, and nothing of a canary token; a value too long is cut and
// says so.
func TestShowCallMasksAndOrdersByRole(t *testing.T) {
	const canary = "ghp_CANARYcanary0123456789abcdefABCDEF01"
	d := &veto.Descriptor{Name: "Tool", Params: map[string]veto.Role{"command": veto.RoleCommand, "file_path": veto.RolePath,
		"content": veto.RoleContent, "url": veto.RoleURL}}
	c := &veto.Call{Tool: "Tool", Args: map[string]any{
		"zeta":      1,
		"command":   "curl -u me:" + canary + " https://api.example.com/x",
		"file_path": "/home/ann/.aws/credentials",
		"content":   "[default]\naws_secret_access_key = plain words here",
		"url":       "https://upload.example.net/a?x=1",
		"api_token": "short",
		"long":      strings.Repeat("a ", veto.MaxShownValue),
	}}
	s := veto.ShowCall(c, d, veto.Target{Kind: veto.TargetFile, ID: "/home/ann/.aws/credentials"})
	var names []string
	all := ""
	for _, f := range s.Fields {
		names = append(names, f.Name)
		all += f.Value
	}
	if want := []string{"command", "file_path", "url", "content", "api_token", "long", "zeta"}; !slices.Equal(names, want) {
		t.Fatalf("fields %v, want %v", names, want)
	}
	if strings.Contains(all, "CANARY") || strings.Contains(all, "plain words") || strings.Contains(all, "short") {
		t.Fatalf("a secret is shown: %q", all)
	}
	if !strings.Contains(s.Fields[0].Value, "curl -u me:[masked] https://api.example.com/x") || !strings.HasPrefix(s.Fields[3].Value, "[masked: the content") {
		t.Fatalf("shown %+v", s.Fields)
	}
	if !slices.Equal(s.Hosts, []string{"api.example.com", "upload.example.net"}) || s.Masked != 3 || !s.Cut {
		t.Fatalf("hosts %v masked %d cut %v", s.Hosts, s.Masked, s.Cut)
	}
	if s.ArgsHash != veto.ArgsHash(c) || s.Target.ID != "/home/ann/.aws/credentials" {
		t.Fatalf("hash or target: %+v", s)
	}
}

// FuzzMaskSecrets: whatever text surrounds it, a token of a known format
// standing as its own word never survives masking, and masking never
// panics.
func FuzzMaskSecrets(f *testing.F) {
	for _, s := range []string{"", "curl -H 'x: ", "a=b c", "https://u:", "\x00\xff", "-----BEGIN "} {
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, before, after string) {
		const token = "ghp_FUZZfuzz0123456789abcdefABCDEF012345"
		in := before + " " + token + " " + after
		out, n := veto.MaskSecrets(in)
		if strings.Contains(out, token) || n == 0 {
			t.Fatalf("MaskSecrets(%q) = %q, %d", in, out, n)
		}
	})
}
