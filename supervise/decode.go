package supervise

import (
	"encoding/binary"
	"errors"
	"net/netip"
)

// The decoding of a request's arguments from the supervised process's memory. Everything here reads untrusted
// bytes: the supervised process chooses them, and may change them while they are read.

// memory reads another process's memory at an address (process_vm_readv or /proc/PID/mem); a short read means the
// rest is not mapped.
type memory interface {
	ReadAt(p []byte, addr uint64) (int, error)
}

const (
	maxPath    = 4096    // PATH_MAX, with its NUL
	maxArgs    = 4096    // arguments read of an argv
	maxArgText = 1 << 20 // bytes read of an argv's strings, all told
	pageSize   = 4096
)

var (
	errNull     = errors.New("null pointer")
	errTooLong  = errors.New("argument too long")
	errUnmapped = errors.New("address not mapped")
	errFamily   = errors.New("address too short for its family")
)

// readString reads the NUL-terminated string at addr, at most max bytes with its NUL. It reads up to each page end
// so that a string ending just before an unmapped page is read whole.
func readString(m memory, addr uint64, max int) (string, error) {
	if addr == 0 {
		return "", errNull
	}
	var buf []byte
	var chunk [pageSize]byte
	for len(buf) < max {
		n := pageSize - int(addr%pageSize)
		if n > max-len(buf) {
			n = max - len(buf)
		}
		got, err := m.ReadAt(chunk[:n], addr)
		if got <= 0 {
			if err == nil {
				err = errUnmapped
			}
			return "", err
		}
		for i := 0; i < got; i++ {
			if chunk[i] == 0 {
				return string(append(buf, chunk[:i]...)), nil
			}
		}
		buf = append(buf, chunk[:got]...)
		if addr+uint64(got) < addr {
			return "", errUnmapped
		}
		addr += uint64(got)
	}
	return "", errTooLong
}

// readArgv reads the NULL-terminated array of string pointers at addr (execve's argv). A NULL argv is the empty
// argv, as Linux takes it.
func readArgv(m memory, addr uint64) ([]string, error) {
	if addr == 0 {
		return nil, nil
	}
	var argv []string
	total := 0
	var word [8]byte
	for i := 0; ; i++ {
		if i >= maxArgs {
			return nil, errTooLong
		}
		p := addr + uint64(8*i)
		if p < addr {
			return nil, errUnmapped
		}
		n, err := m.ReadAt(word[:], p)
		if n != 8 {
			if err == nil {
				err = errUnmapped
			}
			return nil, err
		}
		ptr := binary.LittleEndian.Uint64(word[:])
		if ptr == 0 {
			return argv, nil
		}
		s, err := readString(m, ptr, min(maxArgText-total, 128<<10)+1)
		if err != nil {
			return nil, err
		}
		total += len(s) + 1
		if total > maxArgText {
			return nil, errTooLong
		}
		argv = append(argv, s)
	}
}

// Address families, as Linux numbers them.
const (
	afUnix  = 1
	afInet  = 2
	afInet6 = 10
)

// sockaddr is a decoded socket address: an internet address, a unix socket path ("@name" for an abstract one, ""
// for an unnamed one), or only a family.
type sockaddr struct {
	family int
	addr   netip.AddrPort
	path   string
}

// parseSockaddr decodes a struct sockaddr of the given length as connect(2) receives it.
func parseSockaddr(b []byte) (sockaddr, error) {
	if len(b) < 2 {
		return sockaddr{}, errFamily
	}
	fam := int(binary.LittleEndian.Uint16(b))
	sa := sockaddr{family: fam}
	switch fam {
	case afInet:
		if len(b) < 8 {
			return sa, errFamily
		}
		port := binary.BigEndian.Uint16(b[2:])
		sa.addr = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port)
	case afInet6:
		if len(b) < 24 {
			return sa, errFamily
		}
		port := binary.BigEndian.Uint16(b[2:])
		ip := netip.AddrFrom16([16]byte(b[8:24])).Unmap()
		sa.addr = netip.AddrPortFrom(ip, port)
	case afUnix:
		p := b[2:]
		if len(p) > 108 {
			p = p[:108]
		}
		if len(p) > 0 && p[0] == 0 {
			// Abstract: the name is every byte of the given length, NULs included.
			sa.path = "@" + string(p[1:])
			return sa, nil
		}
		for i, c := range p {
			if c == 0 {
				p = p[:i]
				break
			}
		}
		sa.path = string(p)
	}
	return sa, nil
}

// openWrites says whether open flags may change the file: a write mode, O_CREAT, O_TRUNC or O_APPEND (O_TMPFILE
// carries O_DIRECTORY|O_RDWR or O_WRONLY, so it counts).
func openWrites(flags int) bool {
	const (
		oWronly = 0x1
		oRdwr   = 0x2
		oCreat  = 0x40
		oTrunc  = 0x200
		oAppend = 0x400
	)
	return flags&(oWronly|oRdwr|oCreat|oTrunc|oAppend) != 0
}

// bytesMemory is a memory image starting at base, for tests and the fuzzer.
type bytesMemory struct {
	base uint64
	b    []byte
}

func (m bytesMemory) ReadAt(p []byte, addr uint64) (int, error) {
	if addr < m.base || addr-m.base >= uint64(len(m.b)) {
		return 0, errUnmapped
	}
	n := copy(p, m.b[addr-m.base:])
	return n, nil
}
