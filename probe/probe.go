// Package probe looks at the world for rules, and answers again from the
// record for replay. Live reads the filesystem; Recorded answers only from
// probe events and fails loudly about anything it has no record of.
package probe

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/vetohq/veto"
)

// MaxHash is the largest file Live hashes. A larger file's fact has no
// hash, and facts compare by size and modification time.
const MaxHash = 64 << 20

// maxHash is MaxHash, a variable so that tests can reach the bound with
// small files.
var maxHash int64 = MaxHash

// Live is the probe of the running system.
type Live struct {
	// Now is the clock by which a file's last change counts as settled
	// (Settle); nil means time.Now.
	Now func() time.Time

	hashes *hashCache             // nil: remember nothing between looks
	trusts func(path string) bool // whether the filesystem at path keeps stamps; nil: ask the kernel
}

func (l Live) trustsFS(path string) bool {
	if l.trusts != nil {
		return l.trusts(path)
	}
	return pathTrusted(path)
}

// NewLive returns a live probe that remembers, for up to n files, the
// hash it took under a settled stamp, and answers from it while the file
// shows that stamp unmoved (as FileAgain does with a fact it is given): a
// long-lived process, the hook server, then reads a file again only when
// it changed, whichever run asks.
func NewLive(n int) Live { return Live{hashes: &hashCache{max: n, m: map[string]veto.FileFact{}}} }

// hashCache is what a Live probe remembers: the last stamped fact of each
// path.
type hashCache struct {
	mu  sync.Mutex
	max int
	m   map[string]veto.FileFact
}

func (c *hashCache) get(path string) (veto.FileFact, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.m[path]
	return f, ok
}

func (c *hashCache) put(f veto.FileFact) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		clear(c.m) // a bound, not an eviction policy: what is forgotten is hashed again
	}
	c.m[f.Path] = f
}

var (
	_ veto.Probe    = Live{}
	_ veto.Reprober = Live{}
)

// Settle is how long before a hash a file's last change must lie for the
// hash to carry a stamp: longer than the coarsest timestamp granularity of
// the filesystems stamps are kept on (a second on ext4's small inodes),
// twice over.
const Settle = 2 * time.Second

// File looks at path without following a final symlink: callers pass
// canonical paths, whose symlinks are already followed.
func (l Live) File(ctx context.Context, path string) (veto.FileFact, error) {
	return l.look(ctx, path, nil)
}

// FileAgain is File for a path the run knows: when the file is a regular
// file whose stamp, size and modification time are known's, known's hash
// still holds and the file is not read.
func (l Live) FileAgain(ctx context.Context, path string, known veto.FileFact) (veto.FileFact, error) {
	return l.look(ctx, path, &known)
}

func (l Live) look(ctx context.Context, path string, known *veto.FileFact) (veto.FileFact, error) {
	if err := ctx.Err(); err != nil {
		return veto.FileFact{}, err
	}
	f := veto.FileFact{Path: path}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return veto.FileFact{}, fmt.Errorf("probe: %w", errors.Unwrap(err))
	}
	f.Exists, f.Dir, f.ModTime = true, fi.IsDir(), fi.ModTime().UTC()
	if !fi.Mode().IsRegular() {
		return f, nil
	}
	f.Size = fi.Size()
	if f.Size > maxHash {
		return f, nil
	}
	st := statStamp(fi)
	now := l.now()
	// A known hash stands while the file shows the stamp it was taken
	// under, with the same size and modification time, and the clock has
	// not been set back past the change (after which a new change could
	// be given the same time). The filesystem is asked last, and once: a
	// device number can be freed and taken by another filesystem since.
	trusted := 0 // unknown; 1 trusted; -1 not
	holds := func(k veto.FileFact) bool {
		if st == (veto.FileStamp{}) || k.Stamp != st || k.Path != path || !k.Exists || k.Dir || k.Hash == "" ||
			k.Size != f.Size || !k.ModTime.Equal(f.ModTime) || st.Change > now.UnixNano() {
			return false
		}
		if trusted == 0 {
			trusted = -1
			if l.trustsFS(path) {
				trusted = 1
			}
		}
		return trusted == 1
	}
	if known != nil && holds(*known) {
		f.Hash, f.Stamp = known.Hash, st
		return f, nil
	}
	if l.hashes != nil && st != (veto.FileStamp{}) {
		if k, ok := l.hashes.get(path); ok && holds(k) {
			f.Hash, f.Stamp = k.Hash, st
			return f, nil
		}
	}
	settled := st != (veto.FileStamp{}) && now.UnixNano()-st.Change > int64(Settle)
	h, opened, err := hashFile(path, f.Size, settled)
	if err != nil {
		return veto.FileFact{}, err
	}
	f.Hash = h
	if settled && opened == st {
		f.Stamp = st // the file hashed is the one lstat saw, unchanged, on a local filesystem
		if l.hashes != nil {
			l.hashes.put(f)
		}
	}
	return f, nil
}

func (l Live) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

var buffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// hashFile hashes the file at path with plain system calls: os.File's
// set-up (fcntl calls, a try at the poller) costs more than reading a
// small file. O_NOFOLLOW refuses a symlink swapped in since the lstat, and
// O_NONBLOCK keeps a FIFO swapped in from blocking the decision.
//
// A short read that brings the total to size, the length lstat gave, is
// taken as the end of a regular file without asking again.
//
// With stamp set it also returns the stamp of the file it read, when that
// file is on a filesystem whose stamps veto trusts (a zero stamp else).
func hashFile(path string, size int64, stamp bool) (string, veto.FileStamp, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", veto.FileStamp{}, fmt.Errorf("probe: %w", err)
	}
	defer syscall.Close(fd)
	h := sha256.New()
	buf := buffers.Get().(*[]byte)
	defer buffers.Put(buf)
	for left := maxHash + 1; left > 0; {
		b := *buf
		if int64(len(b)) > left {
			b = b[:left]
		}
		n, err := syscall.Read(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return "", veto.FileStamp{}, fmt.Errorf("probe: read failed")
		}
		if n <= 0 {
			break
		}
		h.Write(b[:n])
		left -= int64(n)
		if n < len(b) && maxHash+1-left == size {
			break
		}
	}
	var st veto.FileStamp
	if stamp {
		st = fdStamp(fd) // after the read: a change while reading moves it
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])), st, nil
}

// ErrNotRecorded is Recorded's answer about a path it has no record of.
var ErrNotRecorded = errors.New("probe: no recorded probe for this path")

// Recorded answers from probe events only. It never touches the world.
type Recorded struct {
	facts     map[string]veto.FileFact
	decisions map[string]map[string]veto.FileFact // call id → path → what the call's decision saw
	results   map[string]map[string]veto.FileFact // call id → path → what the call's successful result taught
}

var _ veto.Probe = (*Recorded)(nil)

// NewRecorded returns a probe that answers with the facts of the probe
// events among evs, the last fact of a path winning.
func NewRecorded(evs []veto.Event) *Recorded {
	r := &Recorded{facts: map[string]veto.FileFact{}, decisions: map[string]map[string]veto.FileFact{},
		results: map[string]map[string]veto.FileFact{}}
	add := func(m map[string]map[string]veto.FileFact, call string, f veto.FileFact) {
		r.facts[f.Path] = f
		if m[call] == nil {
			m[call] = map[string]veto.FileFact{}
		}
		m[call][f.Path] = f
	}
	for _, e := range evs {
		switch {
		case e.Kind == veto.EventProbe && e.Fact != nil:
			add(r.decisions, e.CallID, *e.Fact)
		case e.Kind == veto.EventObserved && e.Outcome == veto.Succeeded:
			for _, f := range e.Files {
				add(r.results, e.CallID, f)
			}
		}
	}
	return r
}

// Decision returns a probe that answers with what one call's decision saw
// when it was recorded; anything else is ErrNotRecorded.
func (r *Recorded) Decision(callID string) veto.Probe { return callProbe(r.decisions[callID]) }

// Result returns a probe that answers with what one call's successful
// result taught when it was recorded; anything else is ErrNotRecorded.
func (r *Recorded) Result(callID string) veto.Probe { return callProbe(r.results[callID]) }

type callProbe map[string]veto.FileFact

func (c callProbe) File(_ context.Context, path string) (veto.FileFact, error) {
	f, ok := c[path]
	if !ok {
		return veto.FileFact{}, ErrNotRecorded
	}
	return f, nil
}

// File returns the recorded fact of path, or ErrNotRecorded.
func (r *Recorded) File(_ context.Context, path string) (veto.FileFact, error) {
	f, ok := r.facts[path]
	if !ok {
		return veto.FileFact{}, ErrNotRecorded
	}
	return f, nil
}
