// Package live keeps a long-lived instance's policy current: the revision
// marked active on the shared database (veto policy push, activate), or,
// where none is, the policy files, reloaded when they change. A policy
// that does not load or build is not taken: the instance keeps deciding
// with the last good one, and says why (Current.Err) in its log, /readyz
// and veto doctor. Beside the active policy it keeps the shadow revision,
// which decides every call again without changing its verdict.
package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/state"
)

// Source says where an instance's policy comes from and how a gate is
// built from it.
type Source struct {
	// Files are the local policy files, used while the database marks no
	// revision active (and always, without Revisions).
	Files policy.LoadOptions
	// Revisions is the shared database's revisions; nil: files only.
	Revisions *state.Revisions
	// Build makes the gate of a policy, with the instance's store.
	Build func(p *policy.Policy) (*veto.Gate, error)
	// Interval is how often the heads and the files are looked at
	// (default 1s: an instance decides with a pushed revision within 2s).
	Interval time.Duration
	Logger   *slog.Logger
	// Acquire, when set, proves the state sound and holds it while the
	// shadow revision decides a call again off the request path (an
	// SQLite file, as every request holds it).
	Acquire func(ctx context.Context) (release func(), err error)
}

// Current is the policy an instance decides with now. It is never
// changed: a reload makes a new one.
type Current struct {
	Policy *policy.Policy
	Gate   *veto.Gate
	Rev    string // the policy's revision hash
	// From is "revision" (the database's active revision) or "files".
	From string
	// Shadow, when set, is the candidate revision ShadowRev (push
	// --shadow): it decides every call again, and its differences are
	// recorded. Nil when ShadowRev is the active revision itself.
	Shadow    *veto.Gate
	ShadowRev string
	// Err is why the last reload was not taken ("" when it was), with
	// the file's line and column where the policy says; ErrAt when.
	// ErrWhere is only the places (file:line:col, each problem's), for
	// what anyone who reaches the service may read (/readyz).
	Err, ErrWhere string
	ErrAt         time.Time
	// Loaded is when this policy was taken.
	Loaded time.Time
}

// Live is an instance's current policy, swapped as it changes.
type Live struct {
	src    Source
	cur    atomic.Pointer[Current]
	mu     sync.Mutex // one reload at a time
	files  string     // the files' stat key when last loaded
	failed string     // the heads or file key whose load failed last (not tried again until it changes)
	// Reloads counts the policies taken after the first, and Failures the
	// reloads not taken. ShadowDiffs counts the calls the shadow revision
	// decided otherwise, ShadowDropped those it could not compare or
	// record.
	Reloads, Failures, ShadowDiffs, ShadowDropped atomic.Int64

	shadowOnce sync.Once
	shadowJobs chan shadowJob
}

// Start loads the policy (the active revision, else the files) and builds
// its gate; an error here is the instance's to refuse starting on. Watch
// then keeps it current.
func Start(ctx context.Context, src Source) (*Live, error) {
	if src.Interval <= 0 {
		src.Interval = time.Second
	}
	if src.Logger == nil {
		src.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Live{src: src}
	var heads state.Heads
	if src.Revisions != nil {
		h, err := l.heads(ctx)
		if err != nil {
			// The database cannot say now: start from the files, and
			// take the active revision once it answers.
			src.Logger.Warn("policy revisions cannot be read; deciding with the policy files until they can", "cause", "state unavailable")
		} else {
			heads = h
		}
	}
	cur, err := l.load(ctx, heads)
	if err != nil {
		return nil, err
	}
	cur.Loaded = time.Now()
	l.cur.Store(cur)
	return l, nil
}

// Current returns the policy to decide with now.
func (l *Live) Current() *Current { return l.cur.Load() }

// Watch looks at the heads and the files every Interval until ctx ends,
// taking each change.
func (l *Live) Watch(ctx context.Context) {
	t := time.NewTicker(l.src.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.Check(ctx)
		}
	}
}

// Check takes a change of the heads or the files, once; it reports
// whether a new policy was taken.
func (l *Live) Check(ctx context.Context) (taken bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer func() {
		if recover() != nil {
			// The last good policy keeps deciding.
			taken = false
			l.Failures.Add(1)
			l.src.Logger.Error("veto failed while looking for a policy change; deciding with the last good one")
		}
	}()
	cur := l.cur.Load()
	var heads state.Heads
	if l.src.Revisions != nil {
		h, err := l.heads(ctx)
		if err != nil {
			return false // the state is down: every decision says so; the policy waits
		}
		heads = h
	}
	want := heads.Active + "\x00" + heads.Shadow
	if heads.Active == "" {
		want += "\x00" + FileKey(l.src.Files)
	}
	have := cur.ShadowRev
	switch cur.From {
	case "revision":
		have = cur.Rev + "\x00" + have
	default:
		have = "\x00" + have + "\x00" + l.files
	}
	if want == have && cur.Err != "" {
		// The change that failed was undone (the old revision marked
		// again, the file restored): what decides is what is asked for.
		mended := *cur
		mended.Err, mended.ErrWhere, mended.ErrAt = "", "", time.Time{}
		l.cur.Store(&mended)
		l.failed = ""
		return false
	}
	if want == have || want == l.failed {
		return false
	}
	next, err := l.load(ctx, heads)
	if err != nil {
		l.failed = want
		l.Failures.Add(1)
		kept := *cur
		kept.Err, kept.ErrWhere, kept.ErrAt = err.Error(), where(err), time.Now()
		l.cur.Store(&kept)
		l.src.Logger.Error("the policy changed and does not load; deciding with the last good one", "revision", cur.Rev,
			"problem", oneLine(err.Error()))
		return false
	}
	l.failed = ""
	next.Loaded = time.Now()
	l.cur.Store(next)
	l.Reloads.Add(1)
	l.src.Logger.Info("policy taken", "revision", next.Rev, "from", next.From, "shadow", next.ShadowRev)
	return true
}

// heads asks the database which revisions are marked, holding the state
// (Acquire) while it does.
func (l *Live) heads(ctx context.Context) (state.Heads, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if l.src.Acquire != nil {
		release, err := l.src.Acquire(ctx)
		if err != nil {
			return state.Heads{}, err
		}
		defer release()
	}
	return l.src.Revisions.Heads(ctx)
}

// load builds the policy the heads say: the active revision (else the
// files), and the shadow one.
func (l *Live) load(ctx context.Context, heads state.Heads) (*Current, error) {
	var cur *Current
	if heads.Active != "" {
		p, g, err := l.revision(ctx, heads.Active)
		if err != nil {
			return nil, fmt.Errorf("revision %s: %w", heads.Active, err)
		}
		cur = &Current{Policy: p, Gate: g, Rev: heads.Active, From: "revision"}
	} else {
		key := FileKey(l.src.Files)
		p, err := policy.Load(l.src.Files)
		if err != nil {
			return nil, err
		}
		g, err := l.src.Build(p)
		if err != nil {
			return nil, fmt.Errorf("the gate cannot be built: %w", err)
		}
		l.files = key
		cur = &Current{Policy: p, Gate: g, Rev: p.Revision(), From: "files"}
	}
	cur.ShadowRev = heads.Shadow
	if heads.Shadow != "" && heads.Shadow != cur.Rev { // a shadow of the active revision differs in nothing
		_, g, err := l.revision(ctx, heads.Shadow)
		if err != nil {
			return nil, fmt.Errorf("shadow revision %s: %w", heads.Shadow, err)
		}
		cur.Shadow = g
	}
	return cur, nil
}

// revision loads a stored revision and builds its gate. The revision's id
// must be the hash of what it holds: a row changed in the database is not
// taken.
func (l *Live) revision(ctx context.Context, id string) (*policy.Policy, *veto.Gate, error) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if l.src.Acquire != nil {
		release, err := l.src.Acquire(qctx)
		if err != nil {
			return nil, nil, errors.New("it cannot be read from the state")
		}
		defer release()
	}
	p, err := Stored(qctx, l.src.Revisions, id, l.src.Files.Compiler)
	if err != nil {
		return nil, nil, err
	}
	g, err := l.src.Build(p)
	if err != nil {
		return nil, nil, fmt.Errorf("the gate cannot be built: %w", err)
	}
	return p, g, nil
}

// Stored loads the stored revision id. Its id must be the hash of what it
// holds: a row changed in the database is not taken.
func Stored(ctx context.Context, revs *state.Revisions, id string, c policy.Compiler) (*policy.Policy, error) {
	rev, err := revs.Get(ctx, id)
	if err != nil {
		if errors.Is(err, state.ErrNoRevision) {
			return nil, errors.New("the database marks it but does not hold it")
		}
		return nil, errors.New("it cannot be read from the state")
	}
	p, err := policy.LoadRevision(NamedFiles(rev.Files), c)
	if err != nil {
		return nil, err
	}
	if p.Revision() != id {
		return nil, fmt.Errorf("its files hash to %s: the stored revision was changed", p.Revision())
	}
	return p, nil
}

// NamedFiles converts a stored revision's files for policy.LoadRevision.
func NamedFiles(fs []state.RevisionFile) []policy.NamedFile {
	out := make([]policy.NamedFile, len(fs))
	for i, f := range fs {
		out[i] = policy.NamedFile{Name: f.Name, Body: f.Body}
	}
	return out
}

// FileKey is what the policy files are now: each path's size, time and
// inode, so an edit or a replaced file is a new key (a path not given, or
// missing, is its name alone). The hook server keys its built gates by it.
func FileKey(lo policy.LoadOptions) string {
	var b strings.Builder
	for _, f := range []string{lo.UserPath, lo.ProjectPath, lo.FlagPath, lo.ManagedPath} {
		b.WriteString(f)
		if f == "" {
			b.WriteByte(0)
			continue
		}
		if fi, err := os.Stat(f); err == nil {
			b.WriteString("|" + strconv.FormatInt(fi.Size(), 10) + "|" + strconv.FormatInt(fi.ModTime().UnixNano(), 10))
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				b.WriteString("|" + strconv.FormatUint(uint64(st.Dev), 10) + "|" + strconv.FormatUint(uint64(st.Ino), 10))
			}
		}
		b.WriteByte(0)
	}
	return b.String()
}

// where is the places of a policy's problems, without what they say; an
// error that is not the policy's is named only as a failure.
func where(err error) string {
	var ps policy.Problems
	if !errors.As(err, &ps) || len(ps) == 0 {
		return "the policy could not be read or built"
	}
	var out []string
	for _, p := range ps {
		w := p.File
		if p.Line > 0 {
			w += ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col)
		}
		out = append(out, w)
	}
	return strconv.Itoa(len(ps)) + " problem(s) at " + strings.Join(out, ", ")
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "; ") }

// shadowJob is one decided call for the shadow revision to decide again.
type shadowJob struct {
	cur  *Current
	call veto.Call
	v    veto.Verdict
}

// shadowQueue bounds the calls waiting for the shadow revision: past it a
// call is not compared (ShadowDropped counts it), so a slow shadow never
// holds a decision up.
const shadowQueue = 1024

// Shadow hands a decided call to the shadow revision of cur, if it has
// one, to be decided again off the decision path; where the two differ
// the difference is recorded (RecordDiff). The verdict is never changed.
// The call must not change after it is handed over.
func (l *Live) Shadow(cur *Current, c *veto.Call, v *veto.Verdict) {
	if cur == nil || cur.Shadow == nil || l.src.Revisions == nil || v.Seq == 0 {
		return // no shadow, or a call that was not recorded (nothing to compare against live traffic)
	}
	l.shadowOnce.Do(func() {
		l.shadowJobs = make(chan shadowJob, shadowQueue)
		go l.shadowLoop()
	})
	j := shadowJob{cur: cur, call: *c, v: *v}
	j.call.ID, j.call.Run.Ref = v.CallID, v.Run
	select {
	case l.shadowJobs <- j:
	default:
		l.ShadowDropped.Add(1)
	}
}

func (l *Live) shadowLoop() {
	for j := range l.shadowJobs {
		l.compare(j)
	}
}

// compare decides one call with the shadow revision and records a
// difference: another verdict, rule or reason.
func (l *Live) compare(j shadowJob) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if l.src.Acquire != nil {
		release, err := l.src.Acquire(ctx)
		if err != nil {
			l.ShadowDropped.Add(1)
			return
		}
		defer release()
	}
	sv := j.cur.Shadow.DryRun(ctx, &j.call)
	a, s := verdictOf(&j.v), verdictOf(&sv)
	if a == s && j.v.Rule == sv.Rule && j.v.Reason == sv.Reason {
		return
	}
	l.ShadowDiffs.Add(1)
	d := state.ShadowDiff{ShadowRev: j.cur.ShadowRev, ActiveRev: j.cur.Rev, Run: j.v.Run, CallID: j.v.CallID, Tool: j.v.Tool,
		At: j.call.Time, Active: a, ActiveRule: j.v.Rule, ActiveReason: j.v.Reason, Shadow: s, ShadowRule: sv.Rule, ShadowReason: sv.Reason}
	if d.At.IsZero() {
		d.At = time.Now()
	}
	if err := l.src.Revisions.RecordDiff(ctx, d); err != nil {
		l.ShadowDropped.Add(1)
		l.src.Logger.Warn("a shadow revision's difference was not recorded", "shadow", j.cur.ShadowRev, "cause", "state unavailable")
	}
}

func verdictOf(v *veto.Verdict) string {
	switch {
	case v.Allowed:
		return "allow"
	case v.Ask:
		return "ask"
	}
	return "deny"
}
