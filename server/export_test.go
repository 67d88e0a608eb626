package server

// HashSecret is how a secret is stored, for tests that write a token
// table of an older veto by hand.
var HashSecret = hashSecret
