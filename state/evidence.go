package state

import (
	"database/sql"

	"github.com/vetohq/veto/evidence"
	"github.com/vetohq/veto/sqlstore"
)

// Checkpoints is the signed checkpoints of the decision log in the
// database db returns (Service.DBFunc), in tables made at their first use
// beside the store's (dialect: "sqlite" or "postgres").
func Checkpoints(db func() *sql.DB, dialect string) evidence.Table {
	return sqlstore.NewCheckpoints(db, dialect)
}
