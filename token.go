package veto

import (
	"context"
	"time"
)

// A TokenRecord is one bearer token of the decision service as a
// TokenStore keeps it: the hash of its secret, never the secret, so that a
// copy of the state opens nothing; the actor every call made with it acts
// as; and its role's name, which the service reads ("" is a token stored
// before tokens had roles).
type TokenRecord struct {
	ID      string
	Hash    string // hex SHA-256 of the secret
	Actor   Actor
	Role    string
	Created time.Time // whole seconds
	Revoked time.Time // zero while the token is live
}

// TokenStore keeps the decision service's tokens beside the state's
// events, so that every instance on one database knows the same tokens
// and a revocation made by one reaches all. The service knows no SQL:
// package sqlstore implements it, and package state opens it with the
// state.
type TokenStore interface {
	// AddToken stores a new token; an id or hash already stored is an
	// error.
	AddToken(ctx context.Context, t TokenRecord) error
	// LiveToken returns the unrevoked token whose secret hashes to hash;
	// ok is false when none does.
	LiveToken(ctx context.Context, hash string) (t TokenRecord, ok bool, err error)
	// ListTokens returns every token, revoked ones included, oldest
	// first.
	ListTokens(ctx context.Context) ([]TokenRecord, error)
	// RevokeToken marks the live token id revoked at at; ok is false when
	// no live token has that id.
	RevokeToken(ctx context.Context, id string, at time.Time) (ok bool, err error)
}
