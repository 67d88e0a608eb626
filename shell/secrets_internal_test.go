package shell

import "testing"

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"AWS_SECRET_ACCESS_KEY": true, "AWS_SESSION_TOKEN": true, "GITHUB_TOKEN": true, "GH_TOKEN": true,
		"OPENAI_API_KEY": true, "DB_PASSWORD": true, "MY_PAT": true, "DATABASE_URL": true, "apiKey": true,
		"githubToken": true, "NPM_CONFIG__AUTH": true, "aws_secret_access_key": true, "DB_PWD": true,
		"HOME": false, "PATH": false, "PWD": false, "OLDPWD": false, "XKB_KEYBOARD_LAYOUT": false,
		"TOKENIZERS_PARALLELISM": false, "SSH_AUTH_SOCK": false, "API_URL": false, "SESSION_MANAGER": false,
		"GIT_ASKPASS": false, "USER": false, "": false,
		"TOKEN_COUNT": false, "MAX_TOKENS": false, "AWS_ACCESS_KEY_ID": false, "DB_PASSWORD_FILE": false,
		"SSH_KEY_PATH": false, "SECRET_NAME": false, "GITHUB_TOKEN_FILE": false, "SECRETS": true,
		"KEY_ID_SECRET": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
	} {
		if got := secretName(name); got != want {
			t.Errorf("secretName(%q) = %v, want %v", name, got, want)
		}
	}
}
