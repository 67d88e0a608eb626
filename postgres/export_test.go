package postgres

// SetMaxConns sets how many connections the stores opened from now on
// open, for a test; the returned function restores it.
func SetMaxConns(n int) (restore func()) {
	old := maxConns
	maxConns = n
	return func() { maxConns = old }
}
