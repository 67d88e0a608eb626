package state

import (
	"database/sql"

	"github.com/vetohq/veto/sqlstore"
)

// The policy revisions of a state's database (sqlstore's), for the
// commands that push, activate and list them and for the instances that
// decide with the one marked active.
type (
	Revisions    = sqlstore.Revisions
	Revision     = sqlstore.Revision
	RevisionFile = sqlstore.RevisionFile
	Heads        = sqlstore.Heads
	ShadowDiff   = sqlstore.ShadowDiff
	DiffGroup    = sqlstore.DiffGroup
)

// The heads a revision may be marked as, and a revision not stored.
const (
	HeadActive = sqlstore.HeadActive
	HeadShadow = sqlstore.HeadShadow
)

// ErrNoRevision is a revision id the database does not hold.
var ErrNoRevision = sqlstore.ErrNoRevision

// NewRevisions keeps revisions in the database db returns; dialect is
// "sqlite" or "postgres".
func NewRevisions(db func() *sql.DB, dialect string) *Revisions {
	return sqlstore.NewRevisions(db, dialect)
}

// Revisions is the policy revisions in the service's database.
func (s *Service) Revisions() *Revisions { return sqlstore.NewRevisions(s.db, s.dialect) }
