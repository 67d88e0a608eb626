package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/server"
)

// The hook's token is an agent's (role agent): it decides and observes
// for the agent it is bound to and answers nothing, so the guarded agent
// that reads it gains no person's power. It is kept in a file of veto's
// config directory, 0600, which the command hook reads (veto hook CLIENT
// --url URL --token-file FILE): the secret is never in the client's
// environment, so the agent's shell does not inherit it.

// hookTokenOpts are init's flags for the hook's token.
type hookTokenOpts struct {
	client, actor, file, state, pg string
	dry                            bool
}

// defaultTokenFile is where init keeps client's hook token.
func defaultTokenFile(client string) (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "veto", "tokens", client+".token"), nil
}

// hookActor is the actor the hook's token acts as: the one named, which
// must be an agent, else agent:CLIENT.
func hookActor(o hookTokenOpts) (veto.Actor, error) {
	if o.actor == "" {
		return veto.Actor{Kind: "agent", ID: o.client}, nil
	}
	a, err := server.ParseActor(o.actor)
	if err != nil {
		return veto.Actor{}, err
	}
	if a.Kind != "agent" {
		return veto.Actor{}, fmt.Errorf("the hook's token acts as an agent (agent:NAME), not %s:…: a person's token is never the hook's", a.Kind)
	}
	return a, nil
}

// setUpHookToken makes sure the file holds a live agent's token of the
// state the service decides on, and returns the file. A file given
// (--token-file) must hold one already; veto's own file is made, or made
// again when its token is revoked or of another actor.
func setUpHookToken(ctx context.Context, o hookTokenOpts) (string, string, error) {
	actor, err := hookActor(o)
	if err != nil {
		return "", "", err
	}
	path, given := o.file, o.file != ""
	if !given {
		if path, err = defaultTokenFile(o.client); err != nil {
			return "", "", err
		}
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", "", err
	}
	if o.dry {
		return path, "", nil
	}
	st, err := openServiceState(ctx, o.state, o.pg, false)
	if err != nil {
		return "", "", fmt.Errorf("cannot open the state the hook's token is kept in: %s", stateCause(err))
	}
	defer st.close()
	toks, _ := st.tokens(ctx)
	secret, err := readTokenFile(path)
	switch {
	case err == nil:
		tok, ok, verr := toks.Verify(ctx, secret)
		if verr != nil {
			return "", "", fmt.Errorf("cannot check the hook's token: %s", stateCause(verr))
		}
		if ok && tok.Role == server.RoleAgent && (o.actor == "" && given || tok.Actor == actor) {
			return path, "kept the hook's token " + tok.ID + " (" + tok.Actor.Kind + ":" + tok.Actor.ID + ", role agent)", nil
		}
		if given {
			return "", "", errors.New("the token file does not hold a live agent's token of this state (veto token create --role agent --actor agent:NAME)")
		}
	case given || !errors.Is(err, fs.ErrNotExist):
		return "", "", err
	}
	tok, secret, err := toks.Create(ctx, actor, server.RoleAgent, time.Now())
	if err != nil {
		return "", "", errors.New("the hook's token could not be stored")
	}
	if err := writeTokenFile(path, secret); err != nil {
		toks.Revoke(ctx, tok.ID, time.Now())
		return "", "", err
	}
	return path, "made the hook's token " + tok.ID + " (" + actor.Kind + ":" + actor.ID + ", role agent) in " + path, nil
}

// readTokenFile reads a token file: a regular file only its owner may
// read, holding one secret.
func readTokenFile(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("the token file %s is not a regular file that only its owner may read (0600)", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	secret := strings.TrimSpace(string(b))
	if secret == "" || strings.ContainsAny(secret, " \t\n") {
		return "", fmt.Errorf("the token file %s does not hold one token", path)
	}
	return secret, nil
}

// writeTokenFile writes secret to path, 0600 in a directory of 0700,
// written beside it and renamed, so a hook never reads half of it.
func writeTokenFile(path, secret string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".veto-tmp"
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(secret + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
