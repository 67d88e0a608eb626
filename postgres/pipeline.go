package postgres

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/vetohq/veto/sqlstore"
)

// claimSchema is the sixth migration: veto_claim, the guard a pipelined
// append runs first (sqlstore.Guard). It makes the row of a new run, locks
// the run's row as LockRun does, and proves it the row the append was
// computed from: the next sequence number and chain hash, and damaged or
// not as the store's header read would find it (recorded so, or its last
// event gone or no longer hashing to the chain hash). A row that moved
// raises serialization_failure (ErrConflict: the gate decides again); a
// call of the batch observed before raises VT001 (the append runs as a
// transaction instead). Either aborts the batch: nothing is stored.
const claimSchema = `
CREATE FUNCTION veto_claim(p_run TEXT, p_next BIGINT, p_last TEXT, p_damaged BOOLEAN, p_calls TEXT[]) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
DECLARE
	r RECORD;
	c TEXT;
	tail BYTEA;
	damaged BOOLEAN;
BEGIN
	IF p_next = 1 THEN
		INSERT INTO veto_runs (run, next, started, start_complete, damaged, last_hash, n_obs, anchor_seq, anchor_prev, updated_ns)
			VALUES (p_run, 1, false, false, false, '', 0, 1, '', 0) ON CONFLICT (run) DO NOTHING;
	END IF;
	SELECT v.next, v.damaged, v.last_hash, v.anchor_seq INTO r FROM veto_runs v WHERE v.run = p_run FOR UPDATE;
	IF NOT FOUND OR r.next <> p_next OR r.last_hash <> p_last THEN
		RAISE EXCEPTION 'veto: the run moved' USING ERRCODE = '40001';
	END IF;
	damaged := r.damaged;
	IF r.next > 1 THEN
		SELECT e.body INTO tail FROM veto_events e WHERE e.run = p_run AND e.seq = r.next - 1;
		IF NOT FOUND THEN
			damaged := damaged OR r.next - 1 >= r.anchor_seq;
		ELSIF encode(sha256(tail), 'hex') <> r.last_hash THEN
			damaged := true;
		END IF;
	END IF;
	IF damaged <> p_damaged THEN
		RAISE EXCEPTION 'veto: the run moved' USING ERRCODE = '40001';
	END IF;
	IF EXISTS (SELECT 1 FROM veto_observations o WHERE o.run = p_run AND o.call_id = ANY (p_calls)) THEN
		RAISE EXCEPTION 'veto: a call of the batch was observed before' USING ERRCODE = 'VT001';
	END IF;
	RETURN true;
END $$`

// claimByCallSchema is the seventh migration: veto_claim as the sixth
// made it, but looking each call of the batch up by (run, call_id). The
// sixth's "call_id = ANY (p_calls)" was planned, once a connection's
// plan for the function went generic, as a scan of every observation of
// the run filtered by call: a decision's guard cost grew with its run
// (0.44 ms at 2000 observations, 2.5 ms at 8000, measured), where an
// equality on both columns of the unique key reads one index entry
// whatever the run's length (TestClaimCostDoesNotGrowWithTheRun).
var claimByCallSchema = strings.Replace(strings.Replace(claimSchema, "CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1),
	`	IF EXISTS (SELECT 1 FROM veto_observations o WHERE o.run = p_run AND o.call_id = ANY (p_calls)) THEN
		RAISE EXCEPTION 'veto: a call of the batch was observed before' USING ERRCODE = 'VT001';
	END IF;`,
	`	FOREACH c IN ARRAY p_calls LOOP
		IF EXISTS (SELECT 1 FROM veto_observations o WHERE o.run = p_run AND o.call_id = c) THEN
			RAISE EXCEPTION 'veto: a call of the batch was observed before' USING ERRCODE = 'VT001';
		END IF;
	END LOOP;`, 1)

// notPipelined is veto_claim's SQLSTATE for a batch that must read first.
const notPipelined = "VT001"

// pipeline is pipelineOnce, made once more on another connection when
// the server had ended the first one's session before it ran the batch
// (gone): a PostgreSQL restarted, or the connection's backend terminated,
// leaves every connection the pool kept ended, and each would refuse the
// decision that took it next. Nothing of a batch is committed before the
// server answers its last statement, so a batch refused in place of one
// of its statements ran none of them; one refused at its commit may have
// committed, and is not sent again.
func pipeline(ctx context.Context, db *sql.DB, pieces []sqlstore.Piece) (at int, err error) {
	at, err, unrun := pipelineOnce(ctx, db, pieces)
	if unrun && gone(err) {
		sqlstore.LetIdleGo(db)
		at, err, _ = pipelineOnce(ctx, db, pieces)
	}
	return at, err
}

// gone reports an error that says the server ended the session of the
// connection it came on: shut down or restarted (57P01, 57P02), the
// database dropped (57P04), idle too long (57P05); or one pgx knows came
// before anything was sent.
func gone(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the request's context ended (pgx: safe to retry), not the session
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P04", "57P05":
			return true
		}
		return false
	}
	return err != nil && pgconn.SafeToRetry(err)
}

// pipelineOnce runs appends' statements as one pgx batch on one connection:
// the extended protocol's messages for all of them and one Sync, so one
// round trip, run by the server as one implicit transaction and committed
// once, each piece's statements after veto_claim proved its row
// (sqlstore.Guard). An error aborts the rest; nothing is stored. at is the
// piece whose guard or statement failed, -1 when the batch failed as a
// whole.
func pipelineOnce(ctx context.Context, db *sql.DB, pieces []sqlstore.Piece) (at int, err error, unrun bool) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return -1, err, false
	}
	defer conn.Close()
	return send(ctx, conn, pieces, false)
}

// hold is sqlstore.Dialect.Hold: BEGIN, the run's row made when missing
// and locked, and read, as one batch. The read is a statement of its own,
// after the lock: one that locked the row as it read it would, once
// another writer let the lock go, see that writer's row but not its last
// event (PostgreSQL reads a row it waited for again, the rest as of the
// statement's start), and find the run damaged.
func hold(ctx context.Context, conn *sql.Conn, run string, read sqlstore.Stmt, dest ...any) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return sqlstore.ErrNoHold // a driver wrapped (tests' faults)
		}
		b := &pgx.Batch{}
		// READ COMMITTED whatever the server's default: the read after the
		// lock must see the row and the last event the lock waited for.
		b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
		b.Queue(makeRun, run)
		b.Queue(`SELECT 1 FROM veto_runs WHERE run = $1 FOR UPDATE`, run)
		b.Queue(sqlstore.Rebind(read.Query, placeholder), read.Args...)
		br := c.Conn().SendBatch(ctx, b)
		for range 3 {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return err
			}
		}
		if err := br.QueryRow().Scan(dest...); err != nil {
			br.Close()
			if errors.Is(err, pgx.ErrNoRows) {
				return sql.ErrNoRows
			}
			return err
		}
		return br.Close()
	})
}

// pipelineIn is sqlstore.Dialect.PipelineIn: the batch sent within the
// transaction open on conn, after a savepoint, and the commit after it;
// rolled back to the savepoint when a statement fails, so that the
// transaction goes on as it was.
func pipelineIn(ctx context.Context, conn *sql.Conn, pieces []sqlstore.Piece) (at int, err error) {
	at, err, _ = send(ctx, conn, pieces, true)
	return at, err
}

// send sends pieces as one batch on conn: pipelineOnce's work, or
// pipelineIn's (inTx).
func send(ctx context.Context, conn *sql.Conn, pieces []sqlstore.Piece, inTx bool) (at int, err error, unrun bool) {
	at = -1
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			at = 0 // a driver wrapped (tests' faults): the appends run as a transaction
			return sqlstore.ErrNotPipelined
		}
		b := &pgx.Batch{}
		if inTx {
			b.Queue(`SAVEPOINT veto_batch`)
		}
		var owner []int // the piece of each queued statement
		for i, pc := range pieces {
			g := pc.Guard
			calls := g.Calls
			if calls == nil {
				calls = []string{}
			}
			b.Queue(`SELECT veto_claim($1, $2, $3, $4, $5)`, g.Run, int64(g.Next), g.Last, g.Damaged, calls)
			owner = append(owner, i)
			for _, st := range pc.Stmts {
				b.Queue(sqlstore.Rebind(st.Query, placeholder), st.Args...)
				owner = append(owner, i)
			}
		}
		if inTx {
			b.Queue(`COMMIT`)
		}
		br := c.Conn().SendBatch(ctx, b)
		if inTx {
			if _, err := br.Exec(); err != nil { // the savepoint
				br.Close()
				return err
			}
		}
		for k := range len(owner) {
			if _, err := br.Exec(); err != nil {
				unrun = true // refused in place of a statement: the batch's commit never ran
				br.Close()
				var pe *pgconn.PgError
				if errors.As(err, &pe) {
					at = owner[k] // the server refused this statement: the rest never ran
					if inTx {
						// The transaction as it was before the batch; a
						// rollback that fails leaves it failed, and is
						// the batch's error (never ErrNotPipelined: the
						// append could not go on in it).
						if _, rerr := c.Conn().Exec(context.WithoutCancel(ctx), `ROLLBACK TO SAVEPOINT veto_batch`); rerr != nil {
							at = -1
							return errors.Join(errors.New("postgres: a statement of the batch failed, and so did the rollback to its savepoint"), rerr)
						}
					}
				}
				return err
			}
		}
		if inTx {
			tag, err := br.Exec() // the commit
			if err == nil && tag.String() != "COMMIT" {
				err = errors.New("postgres: the transaction was rolled back at its commit") // it had failed
			}
			if err != nil {
				br.Close()
				return err
			}
		}
		return br.Close() // the commit, or within a transaction the batch's end
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == notPipelined || errors.Is(err, sqlstore.ErrNotPipelined) {
		if at < 0 {
			at = 0
		}
		return at, sqlstore.ErrNotPipelined, false
	}
	return at, err, unrun
}
