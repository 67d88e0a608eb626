package export

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// JSONL writes records as JSON Lines: each the stored event's JSON on
// one line. To a file it appends, synced after each batch, and rotates
// by size: past Max bytes the file becomes FILE.1 (FILE.1 becomes
// FILE.2, …), and only Keep rotated files are kept. To stdout it writes
// and flushes.
type JSONL struct {
	path string // "" for out
	out  io.Writer
	max  int64
	keep int

	f    *os.File
	w    *bufio.Writer
	size int64
	buf  []byte
}

// NewJSONL writes to the file at path, or to stdout for "-"; max is the
// size past which the file is rotated (0: never) and keep how many
// rotated files stay.
func NewJSONL(path string, max int64, keep int) *JSONL {
	if path == "-" {
		// A reader of stdout that goes away must not end veto serve: Go
		// kills a program writing to a broken pipe on fd 1 unless
		// SIGPIPE is notified; then the write fails, EPIPE, and is
		// counted like any sink's failure.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
		return &JSONL{out: os.Stdout}
	}
	return &JSONL{path: path, max: max, keep: keep}
}

// Send implements Sink.
func (j *JSONL) Send(ctx context.Context, recs []Record) error {
	if err := j.open(); err != nil {
		return err
	}
	for i := range recs {
		j.buf = append(AppendASCIIJSON(j.buf[:0], recs[i].Body), '\n')
		if j.path != "" && j.max > 0 && j.size > 0 && j.size+int64(len(j.buf)) > j.max {
			if err := j.rotate(); err != nil {
				return j.fail(err)
			}
		}
		n, err := j.w.Write(j.buf)
		j.size += int64(n)
		if err != nil {
			return j.fail(err)
		}
	}
	if err := j.w.Flush(); err != nil {
		return j.fail(err)
	}
	if j.f != nil {
		if err := j.f.Sync(); err != nil {
			return j.fail(err)
		}
	}
	return nil
}

func (j *JSONL) fail(err error) error {
	j.Close()
	return fmt.Errorf("export: %s: %w", j.name(), err)
}

func (j *JSONL) name() string {
	if j.path == "" {
		return "stdout"
	}
	return j.path
}

// open opens the file to append (a line a crash cut short is ended
// first, so the next starts on its own line).
func (j *JSONL) open() error {
	if j.w != nil {
		return nil
	}
	if j.path == "" {
		j.w = bufio.NewWriterSize(j.out, 64<<10)
		return nil
	}
	f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("export: %w", err)
	}
	j.f, j.size = f, fi.Size()
	j.w = bufio.NewWriterSize(f, 64<<10)
	if j.size > 0 {
		var last [1]byte
		if r, err := os.Open(j.path); err == nil {
			_, err = r.ReadAt(last[:], j.size-1)
			r.Close()
			if err == nil && last[0] != '\n' {
				j.w.WriteByte('\n')
				j.size++
			}
		}
	}
	return nil
}

// rotate moves the file aside as FILE.1 and starts a new one.
func (j *JSONL) rotate() error {
	if err := j.w.Flush(); err != nil {
		return err
	}
	if err := j.f.Sync(); err != nil {
		return err
	}
	j.f.Close()
	j.f, j.w = nil, nil
	if j.keep <= 0 {
		if err := os.Remove(j.path); err != nil && !os.IsNotExist(err) {
			return err
		}
	} else {
		// Shift only the files there are: FILE.1 … FILE.n, n < keep.
		n := 0
		for n < j.keep {
			if _, err := os.Lstat(j.path + "." + strconv.Itoa(n+1)); err != nil {
				break
			}
			n++
		}
		if n == j.keep {
			os.Remove(j.path + "." + strconv.Itoa(j.keep))
			n--
		}
		for i := n; i >= 1; i-- {
			if err := os.Rename(j.path+"."+strconv.Itoa(i), j.path+"."+strconv.Itoa(i+1)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		if err := os.Rename(j.path, j.path+".1"); err != nil {
			return err
		}
	}
	if d, err := os.Open(filepath.Dir(j.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return j.open()
}

// Close implements Sink.
func (j *JSONL) Close() error {
	var err error
	if j.w != nil {
		err = j.w.Flush()
	}
	if j.f != nil {
		if cerr := j.f.Close(); err == nil {
			err = cerr
		}
	}
	j.f, j.w = nil, nil
	return err
}

// ParseSize reads a size: bytes, or a number with KB, MB, GB (powers of
// 1000) or KiB, MiB, GiB (of 1024); 0 turns rotation off.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}} {
		if n, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size (as 64MB, 512KiB, 0 for none)", s)
	}
	return n * mult, nil
}
