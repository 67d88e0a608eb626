package supervise

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
)

// image lays out strings and pointer arrays in a memory image starting at base.
type image struct {
	base uint64
	b    []byte
}

func (im *image) addr() uint64 { return im.base + uint64(len(im.b)) }

func (im *image) str(s string) uint64 {
	a := im.addr()
	im.b = append(im.b, s...)
	im.b = append(im.b, 0)
	return a
}

func (im *image) ptrs(ps ...uint64) uint64 {
	a := im.addr()
	for _, p := range ps {
		im.b = binary.LittleEndian.AppendUint64(im.b, p)
	}
	return a
}

func (im *image) mem() memory { return bytesMemory{im.base, im.b} }

func TestReadArgv(t *testing.T) {
	im := &image{base: 0x10000}
	a, b, c := im.str("/bin/sh"), im.str("-c"), im.str("echo hi")
	argv := im.ptrs(a, b, c, 0)
	got, err := readArgv(im.mem(), argv)
	if err != nil || strings.Join(got, "|") != "/bin/sh|-c|echo hi" {
		t.Fatalf("got %q %v", got, err)
	}
	if got, err := readArgv(im.mem(), 0); err != nil || got != nil {
		t.Errorf("NULL argv: %q %v", got, err)
	}
	// A pointer array running off the image, and a string without its NUL, are errors.
	im2 := &image{base: 0x10000}
	im2.ptrs(im2.str("x"))
	if _, err := readArgv(im2.mem(), im2.base+2); err == nil {
		t.Errorf("unterminated argv: no error")
	}
	im3 := &image{base: 0x10000, b: []byte("no nul")}
	if _, err := readString(im3.mem(), im3.base, maxPath); err == nil {
		t.Errorf("unterminated string: no error")
	}
}

// A string that ends right before an unmapped page is read whole: reads stop at each page end.
func TestReadStringPageEnd(t *testing.T) {
	s := strings.Repeat("a", 100)
	base := uint64(3*pageSize - len(s) - 1)
	im := &image{base: base}
	im.str(s)
	got, err := readString(im.mem(), base, maxPath)
	if err != nil || got != s {
		t.Fatalf("got %q %v", got, err)
	}
	long := &image{base: 0x10000}
	long.str(strings.Repeat("b", maxPath))
	if _, err := readString(long.mem(), long.base, maxPath); err == nil {
		t.Errorf("a path of PATH_MAX bytes without its NUL inside: no error")
	}
}

func TestParseSockaddr(t *testing.T) {
	in4 := []byte{2, 0, 0x1f, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}
	in6 := make([]byte, 28)
	in6[0] = 10
	binary.BigEndian.PutUint16(in6[2:], 443)
	copy(in6[8:], netip.MustParseAddr("::ffff:169.254.169.254").AsSlice())
	un := append([]byte{1, 0}, "/run/x.sock\x00junk"...)
	abs := append([]byte{1, 0, 0}, "name\x00x"...)
	for _, c := range []struct {
		b    []byte
		fam  int
		addr string
		path string
	}{
		{in4, afInet, "127.0.0.1:8080", ""},
		{in6, afInet6, "169.254.169.254:443", ""},
		{un, afUnix, "invalid AddrPort", "/run/x.sock"},
		{abs, afUnix, "invalid AddrPort", "@name\x00x"},
	} {
		sa, err := parseSockaddr(c.b)
		if err != nil || sa.family != c.fam || sa.addr.String() != c.addr || sa.path != c.path {
			t.Errorf("%v: got %+v %v", c.b, sa, err)
		}
	}
	if _, err := parseSockaddr(in4[:6]); err == nil {
		t.Errorf("short AF_INET: no error")
	}
}

func TestOpenWrites(t *testing.T) {
	for flags, want := range map[int]bool{0: false, 0x80000: false, 1: true, 2: true, 0x40: true, 0x200: true, 0x400: true,
		0x410000 | 2: true} {
		if openWrites(flags) != want {
			t.Errorf("%#x: %v", flags, !want)
		}
	}
}

// FuzzDecode reads argv, a string and a sockaddr out of an arbitrary memory image at arbitrary addresses: no
// panic, a string never holds its NUL nor exceeds its bound, an argv never exceeds its bounds.
func FuzzDecode(f *testing.F) {
	im := &image{base: 0x10000}
	a, b := im.str("/usr/bin/env"), im.str("python3")
	argv := im.ptrs(a, b, 0)
	f.Add(im.b, uint16(argv-im.base), uint16(a-im.base), uint8(16))
	f.Add([]byte{2, 0, 0, 80, 10, 0, 0, 1}, uint16(0), uint16(0), uint8(8))
	f.Add([]byte{1, 0, 0, 'a', 'b'}, uint16(0), uint16(0), uint8(5))
	f.Add([]byte{10, 0}, uint16(1), uint16(1), uint8(200))
	f.Fuzz(func(t *testing.T, mem []byte, argvOff, strOff uint16, salen uint8) {
		m := bytesMemory{0x10000, mem}
		if s, err := readString(m, 0x10000+uint64(strOff), maxPath); err == nil {
			if strings.IndexByte(s, 0) >= 0 || len(s) >= maxPath {
				t.Fatalf("string %q", s)
			}
		}
		if args, err := readArgv(m, 0x10000+uint64(argvOff)); err == nil {
			total := 0
			for _, s := range args {
				total += len(s) + 1
			}
			if len(args) > maxArgs || total > maxArgText {
				t.Fatalf("argv of %d, %d bytes", len(args), total)
			}
		}
		n := min(int(salen), len(mem))
		if sa, err := parseSockaddr(mem[:n]); err == nil {
			switch sa.family {
			case afInet, afInet6:
				if !sa.addr.IsValid() || sa.addr.Addr().Is4In6() {
					t.Fatalf("address %v", sa.addr)
				}
			case afUnix:
				abstract := strings.HasPrefix(sa.path, "@")
				if len(sa.path) > 108 || !abstract && strings.IndexByte(sa.path, 0) >= 0 {
					t.Fatalf("unix path %q", sa.path)
				}
			}
		}
	})
}
