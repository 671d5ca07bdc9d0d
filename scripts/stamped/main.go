// Command stamped prints the value of a string variable that the linker
// set with -X (go build -ldflags "-X main.version=1.2.0"), read from the
// binary's symbol table without running it: a binary for another platform
// can be checked. -trimpath leaves -ldflags out of the build info, so
// `go version -m` cannot show it. The binary must keep its symbol table
// (no -s). ELF and Mach-O, 64-bit little-endian (amd64, arm64).
//
//	go run ./scripts/stamped dist/kproxy main.version
package main

import (
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: stamped BINARY SYMBOL (e.g. main.version)")
		os.Exit(2)
	}
	value, err := stampedString(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "stamped: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	fmt.Println(value)
}

// section is a loaded range of the binary's address space.
type section struct {
	addr, size uint64
	data       io.ReaderAt
}

// image is what a string needs: sections and the symbol's address.
type image struct {
	sections []section
	symbol   func(name string) (uint64, bool)
}

// stampedString reads the Go string variable symbol in the binary at path.
func stampedString(path, symbol string) (string, error) {
	img, closer, err := open(path)
	if err != nil {
		return "", err
	}
	defer closer.Close()
	addr, ok := img.symbol(symbol)
	if !ok {
		return "", fmt.Errorf("no symbol %s (built with -s, or the variable is not linked)", symbol)
	}
	// A Go string is a data pointer and a length, 8 bytes each.
	header := make([]byte, 16)
	if err := img.read(addr, header); err != nil {
		return "", fmt.Errorf("%s's string header: %w", symbol, err)
	}
	ptr, n := binary.LittleEndian.Uint64(header[:8]), binary.LittleEndian.Uint64(header[8:])
	if n == 0 {
		return "", nil
	}
	if n > 1<<20 {
		return "", fmt.Errorf("%s's length %d is not a stamped string's", symbol, n)
	}
	value := make([]byte, n)
	if err := img.read(ptr, value); err != nil {
		return "", fmt.Errorf("%s's bytes: %w", symbol, err)
	}
	return string(value), nil
}

func (img image) read(addr uint64, buf []byte) error {
	for _, s := range img.sections {
		if addr >= s.addr && addr+uint64(len(buf)) <= s.addr+s.size {
			_, err := s.data.ReadAt(buf, int64(addr-s.addr))
			return err
		}
	}
	return fmt.Errorf("address %#x is in no section with contents", addr)
}

func open(path string) (image, io.Closer, error) {
	if f, err := elf.Open(path); err == nil {
		img, err := elfImage(f)
		return img, f, err
	}
	if f, err := macho.Open(path); err == nil {
		img, err := machoImage(f)
		return img, f, err
	}
	return image{}, nil, errors.New("neither ELF nor Mach-O")
}

func elfImage(f *elf.File) (image, error) {
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		return image{}, errors.New("not a 64-bit little-endian ELF binary")
	}
	syms, err := f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		return image{}, errors.New("no symbol table (built with -s)")
	} else if err != nil {
		return image{}, fmt.Errorf("symbol table: %w", err)
	}
	img := image{symbol: func(name string) (uint64, bool) {
		for _, s := range syms {
			if s.Name == name {
				return s.Value, true
			}
		}
		return 0, false
	}}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS && s.Addr != 0 {
			img.sections = append(img.sections, section{s.Addr, s.Size, s})
		}
	}
	return img, nil
}

func machoImage(f *macho.File) (image, error) {
	if f.Magic != macho.Magic64 || f.ByteOrder != binary.LittleEndian {
		return image{}, errors.New("not a 64-bit little-endian Mach-O binary")
	}
	if f.Symtab == nil {
		return image{}, errors.New("no symbol table (built with -s)")
	}
	img := image{symbol: func(name string) (uint64, bool) {
		for _, s := range f.Symtab.Syms {
			if s.Name == name || s.Name == "_"+name {
				return s.Value, true
			}
		}
		return 0, false
	}}
	for _, s := range f.Sections {
		// Zero-fill sections (bss) have no bytes in the file.
		if s.Flags&0xff != 0x1 && s.Flags&0xff != 0xc {
			img.sections = append(img.sections, section{s.Addr, s.Size, s})
		}
	}
	return img, nil
}
