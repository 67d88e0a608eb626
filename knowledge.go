package veto

import (
	"context"
	"errors"
	"time"
)

// FileFact is what a probe saw of one path: whether something exists
// there, what it is, its size and modification time, and for a regular
// file its content hash. Never its content.
type FileFact struct {
	Path    string    `json:"path"`
	Exists  bool      `json:"exists"`
	Dir     bool      `json:"dir,omitempty"`
	Size    int64     `json:"size,omitempty"`
	ModTime time.Time `json:"mtime,omitzero"`
	Hash    string    `json:"sha256,omitempty"` // hex SHA-256 of a regular file's content, when it was hashed
	// Stamp is the file's identity and change time when Hash was taken, set
	// only when that change was already settled (see FileStamp).
	Stamp FileStamp `json:"stamp,omitzero"`
}

// FileStamp is what the kernel says of a regular file's identity and last
// change: its device, inode and change time (ctime, which only a change
// of the file, its metadata or the system clock moves; no call sets it).
//
// A probe records one beside a hash only when the change lay far enough in
// the past, on a local filesystem, that any later change must move the
// stamp; a change within the filesystem's timestamp granularity of the
// hash could otherwise leave it as it was. A later look that finds the
// same stamp, size and modification time may take the hash as still true
// without reading the file (Reprober).
type FileStamp struct {
	Dev    uint64 `json:"dev"`
	Ino    uint64 `json:"ino"`
	Change int64  `json:"ctime_ns"` // nanoseconds since the Unix epoch
}

// Same reports whether f and g describe the same state of the file: same
// existence and kind, same size, and the same hash when both have one
// (the same modification time otherwise).
func (f FileFact) Same(g FileFact) bool {
	if f.Exists != g.Exists || f.Dir != g.Dir {
		return false
	}
	if !f.Exists || f.Dir {
		return true
	}
	if f.Size != g.Size {
		return false
	}
	if f.Hash != "" && g.Hash != "" {
		return f.Hash == g.Hash
	}
	return f.ModTime.Equal(g.ModTime)
}

// Probe looks at the world. Every answer the gate gets from it during a
// decision is recorded as a probe event in the same batch as the decision,
// ahead of it; replay answers from those events and never looks at the
// world.
type Probe interface {
	File(ctx context.Context, path string) (FileFact, error)
}

// Reprober is a Probe that can look again at a file the run already
// knows, and reuse known's hash when the file's stamp shows it has not
// changed since, instead of reading it. Its answer is what File would
// say, but for the cost.
type Reprober interface {
	FileAgain(ctx context.Context, path string, known FileFact) (FileFact, error)
}

// ProbeAgain asks p about path, given what the run knew of it: through
// FileAgain when p is a Reprober, else through File.
func ProbeAgain(ctx context.Context, p Probe, path string, known FileFact) (FileFact, error) {
	if r, ok := p.(Reprober); ok {
		return r.FileAgain(ctx, path, known)
	}
	return p.File(ctx, path)
}

// ErrNoProbe is what a gate without a probe answers: rules that need the
// world fail, and fail closed.
var ErrNoProbe = errors.New("veto: no probe configured")

type noProbe struct{}

func (noProbe) File(context.Context, string) (FileFact, error) { return FileFact{}, ErrNoProbe }

// Knowledge is what a run has learned from the results of its successful
// calls, and the egress allow-list its events added. A blocked call, a
// failed one, or one that never reported back teaches nothing.
type Knowledge interface {
	// File returns the fact recorded when a successful call last read or
	// wrote path.
	File(ctx context.Context, path string) (FileFact, bool, error)
	// Files returns every path the run has knowledge of, sorted, for rules
	// that look at all of them (CEL's knowledge.files).
	Files(ctx context.Context) ([]string, error)
	// Egress returns the run's egress allow-list: the entries its
	// egress_allowed events added, in order.
	Egress(ctx context.Context) ([]string, error)
}

// NoKnowledge is the knowledge of a run that has learned nothing.
var NoKnowledge Knowledge = noKnowledge{}

type noKnowledge struct{}

func (noKnowledge) File(context.Context, string) (FileFact, bool, error) {
	return FileFact{}, false, nil
}

func (noKnowledge) Files(context.Context) ([]string, error) { return nil, nil }

func (noKnowledge) Egress(context.Context) ([]string, error) { return nil, nil }

// Learner names the files a successful call read or wrote, as canonical
// paths. The gate probes each right after the call and records what it saw
// as the run's knowledge.
type Learner interface {
	Touched(c *Call, d *Descriptor) ([]string, error)
}

// recordingProbe answers a decision's probes and remembers each answer so
// the gate can record it. It asks the world once per path.
type recordingProbe struct {
	inner Probe
	facts []FileFact
	max   int
}

func (r *recordingProbe) File(ctx context.Context, path string) (FileFact, error) {
	return r.look(ctx, path, func() (FileFact, error) { return r.inner.File(ctx, path) })
}

// FileAgain implements Reprober, recording the answer as File does.
func (r *recordingProbe) FileAgain(ctx context.Context, path string, known FileFact) (FileFact, error) {
	return r.look(ctx, path, func() (FileFact, error) { return ProbeAgain(ctx, r.inner, path, known) })
}

func (r *recordingProbe) look(ctx context.Context, path string, ask func() (FileFact, error)) (FileFact, error) {
	for _, f := range r.facts {
		if f.Path == path {
			return f, nil
		}
	}
	if len(r.facts) >= r.max {
		return FileFact{}, errors.New("veto: too many probes for one call")
	}
	f, err := ask()
	if err != nil {
		return FileFact{}, err
	}
	f.Path = path
	r.facts = append(r.facts, f)
	return f, nil
}

// PathUse is a path a call touches that its descriptor's roles do not
// name: one a shell command reads or writes, say. The file rules judge it
// like any other path.
type PathUse struct {
	Path    string // as written; empty when Unknown
	Dir     string // the directory Path is relative to; empty when unknown
	Write   bool
	Unknown bool // the path cannot be known statically: for a write, it is outside every root
	Removes bool // a recursive removal (forced or not) of the path and everything below it
	Tree    bool // a read of the path and everything below it (a recursive copy, archive or search)
	// Pattern, for an Unknown path, is what is known of it, each part that
	// is not as "*" (which may stand for several segments):
	// "/proc/*/environ", "*/.aws/credentials"; "" when nothing is.
	Pattern string
}

// PathExtractor finds the paths of a call that descriptor roles cannot
// name.
type PathExtractor interface {
	Paths(ctx context.Context, in *Input) ([]PathUse, error)
}
