//go:build !linux || !amd64

package supervise

import "context"

// Run runs the command under the supervisor and returns its exit status (as a shell reports it: 128+signal).
// On this system it always fails with ErrUnsupported: the command never runs unsupervised.
func Run(ctx context.Context, cfg Config) (int, error) { return -1, ErrUnsupported }

// Probe reports what this kernel offers.
func Probe() Features { return Features{Why: "supervision needs Linux on amd64"} }

// Child is called first thing in main(): when this process is the supervisor's re-executed child it never returns.
// On this system there is no such child: it returns at once.
func Child() {}
