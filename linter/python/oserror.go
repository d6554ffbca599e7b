package python

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// pyOSError renders err, from opening or reading the file name, as Python
// prints the OSError that open() raises: the exception class the errno
// maps to, the errno, its C message and the file name's repr.
func pyOSError(name string, err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		var pe *fs.PathError
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return fmt.Sprintf("OSError: %s: %s", capitalize(msg), pyRepr(name))
	}
	return fmt.Sprintf("%s: [Errno %d] %s: %s", oserrorClass(errno), int(errno), strerror(errno), pyRepr(name))
}

// oserrorClass is the OSError subclass Python raises for errno (PEP 3151).
func oserrorClass(e syscall.Errno) string {
	switch e {
	case syscall.ENOENT:
		return "FileNotFoundError"
	case syscall.EACCES, syscall.EPERM:
		return "PermissionError"
	case syscall.EISDIR:
		return "IsADirectoryError"
	case syscall.ENOTDIR:
		return "NotADirectoryError"
	case syscall.EEXIST:
		return "FileExistsError"
	case syscall.EINTR:
		return "InterruptedError"
	case syscall.EAGAIN, syscall.EALREADY, syscall.EINPROGRESS:
		return "BlockingIOError"
	case syscall.ETIMEDOUT:
		return "TimeoutError"
	}
	return "OSError"
}

// strerror is the C library's message for e: Go's, which is glibc's in
// lower case (a few differ and are spelt out).
func strerror(e syscall.Errno) string {
	switch e {
	case syscall.ELOOP:
		return "Too many levels of symbolic links"
	case syscall.ENAMETOOLONG:
		return "File name too long"
	}
	return capitalize(e.Error())
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// pyRepr is Python's repr() of a str: single quotes unless the text holds
// one and no double quote, backslash escapes for the quote, backslash and
// unprintable characters. Bytes that are not UTF-8 are shown as Python's
// surrogate escapes would be (\udcXX).
func pyRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\udc%02x`, s[i])
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && !unicode.IsPrint(r):
			switch {
			case r <= 0xff:
				fmt.Fprintf(&b, `\x%02x`, r)
			case r <= 0xffff:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
		i += n
	}
	b.WriteByte(q)
	return b.String()
}
