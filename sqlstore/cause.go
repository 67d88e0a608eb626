package sqlstore

import (
	"errors"
	"syscall"

	"github.com/vetohq/veto"
)

// CauseOf returns the StateError in err's chain, classifying an
// unclassified error by classify (nil: the cause is unreachable).
func CauseOf(err error, classify func(error) (veto.Cause, string)) *veto.StateError {
	if err == nil {
		return nil
	}
	var se *veto.StateError
	if errors.As(err, &se) {
		return se
	}
	c, d := veto.CauseUnreachable, ""
	if classify != nil {
		c, d = classify(err)
	}
	if c == "" {
		c = veto.CauseUnreachable
	}
	return &veto.StateError{Cause: c, Detail: d, Err: err}
}

// OSCause classifies an operating-system error: a full disk, a path that
// is not a directory, a missing permission.
func OSCause(err error) (veto.Cause, string) {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return veto.CauseFull, ""
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.ELOOP):
		return veto.CauseBadPath, ""
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EROFS):
		return veto.CauseUnreachable, "permission denied"
	}
	return "", ""
}
