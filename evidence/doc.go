// Package evidence signs the decision log and checks it offline: a
// service with a signing key (Ed25519) signs checkpoints of the log (the
// heads of the runs' hash chains, numbered and chained, each naming the
// hash of the one before), kept in the state's database; Export writes a
// log's events and checkpoints as JSON Lines, and Verify checks such an
// export with the public key alone, without the database.
//
// Nothing secret is in a checkpoint or an export: events hold no argument
// text, and a checkpoint holds run ids, sequence numbers and hashes.
// docs/evidence.md describes the formats.
package evidence
