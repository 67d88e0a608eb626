package evidence

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// GenerateKey writes a new Ed25519 key pair: the private key at path, as
// PEM PKCS#8 readable by its owner only (0600), the public key at
// path+".pub", as PEM PKIX. Neither file may exist already. It returns the
// key's id.
func GenerateKey(path string) (string, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", err
	}
	pder, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path + ".pub"); err == nil {
		return "", fmt.Errorf("%s exists already", path+".pub")
	}
	if err := writeNew(path, 0o600, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})); err != nil {
		return "", err
	}
	if err := writeNew(path+".pub", 0o644, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pder})); err != nil {
		os.Remove(path)
		return "", err
	}
	return KeyID(pub), nil
}

// writeNew writes b to a file that must not exist yet.
func writeNew(path string, mode os.FileMode, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s exists already", path)
		}
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// LoadPrivate reads a private key written by GenerateKey. A file that
// its group or others may read or write is refused, as ssh refuses one.
// No error names or shows any of the key's bytes.
func LoadPrivate(path string) (ed25519.PrivateKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("the key file %s is open to others (mode %04o): make it the owner's alone, chmod 600 %s", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("the key file %s holds no PEM PRIVATE KEY (make one with veto log keygen)", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the key file %s holds no PKCS#8 private key", path)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("the key file %s holds a key that is not Ed25519", path)
	}
	return priv, nil
}

// LoadPublic reads a public key written by GenerateKey.
func LoadPublic(path string) (ed25519.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("%s holds no PEM PUBLIC KEY", path)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s holds no PKIX public key", path)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%s holds a key that is not Ed25519", path)
	}
	return pub, nil
}

// KeyID names a public key in checkpoints and messages: the first 16 hex
// digits of the SHA-256 of its PKIX form.
func KeyID(pub ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:8])
}
