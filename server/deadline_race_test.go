//go:build race

package server_test

import "time"

const pushDeadline = 10 * time.Second
