package config

import (
	"bytes"
	"reflect"
	"regexp"
	"strings"
)

// DefaultsYAML is a whole configuration file with every key at its
// default, each under a comment saying what it does (its Reference row).
// Sections whose presence turns something on (tls, sasl, policy, ...) and
// the entries of lists are written commented out, so the file runs as
// printed once upstream.bootstrap_servers is set.
func DefaultsYAML() []byte { return renderDefaults(false) }

// renderDefaults writes the defaults file; all writes every section and
// one entry per list uncommented, which only tests read.
func renderDefaults(all bool) []byte {
	r := defaultsRenderer{all: all}
	r.line(0, -1, "# kproxy configuration: every key at its default (kproxy config defaults).")
	r.line(0, -1, "# Sections commented out are off until written; so are list entries.")
	r.line(0, -1, "# Set upstream.bootstrap_servers (or upstream.embedded) before running it.")
	r.line(0, -1, "# The reference: docs/configuration.md.")
	r.section(reflect.ValueOf(defaultedConfig()).Elem(), "", 0, -1)
	return r.out.Bytes()
}

type defaultsRenderer struct {
	all bool
	out bytes.Buffer
	// dash marks the next key written as a list entry's first.
	dash bool
}

// key writes a key line, "- " before it when it starts a list entry.
func (r *defaultsRenderer) key(indent, commentAt int, text string) {
	if r.dash {
		r.dash = false
		indent -= 2
		text = "- " + text
	}
	r.line(indent, commentAt, text)
}

// line writes text at indent; from commentAt on (when >= 0) the line is
// commented out.
func (r *defaultsRenderer) line(indent, commentAt int, text string) {
	if commentAt >= 0 {
		r.out.WriteString(strings.Repeat(" ", commentAt) + "# " + strings.Repeat(" ", indent-commentAt) + text + "\n")
		return
	}
	r.out.WriteString(strings.Repeat(" ", indent) + text + "\n")
}

// section writes the keys of struct v, whose path is prefix.
func (r *defaultsRenderer) section(v reflect.Value, prefix string, indent, commentAt int) {
	for i, k := range fieldKeys(v, prefix) {
		name, path, fv, list, isSection := k.name, k.path, k.value, k.list, k.section
		if i > 0 || prefix == "" {
			r.out.WriteString("\n")
		}
		doc, _ := LookupKey(path)
		comment := doc.Meaning
		if doc.DefaultNote != "" && !isSection {
			comment += " (default: " + doc.DefaultNote + ")"
		}
		for _, text := range wrap(plainText(comment), 76-indent) {
			r.line(indent, commentAt, "# "+text)
		}
		off := commentAt
		switch {
		case !isSection:
			r.key(indent, off, name+": "+formatValue(fv))
		case isShared(path) && strings.HasPrefix(path, "virtual_clusters[]."):
			// Written once, where the section it repeats is.
			r.key(indent, off, name+": {}")
		case list:
			if off < 0 && !r.all {
				r.key(indent, off, name+": []")
				off = indent
			}
			r.key(indent, off, name+":")
			r.listEntry(fv.Index(0), path, indent+2, off)
		default:
			if off < 0 && !r.all && fv.Kind() == reflect.Pointer {
				off = indent
			}
			r.key(indent, off, name+":")
			if fv.Kind() == reflect.Pointer {
				fv = fv.Elem()
			}
			r.section(fv, path+".", indent+2, off)
		}
	}
}

// listEntry writes one entry of a list of sections: its keys, the first
// marked "- ".
func (r *defaultsRenderer) listEntry(v reflect.Value, path string, indent, commentAt int) {
	r.dash = true
	r.section(v, path+".", indent+2, commentAt)
}

// isShared reports whether path is a section that repeats another.
func isShared(path string) bool {
	for _, s := range SharedSections() {
		if s.At == path {
			return true
		}
	}
	return false
}

var (
	markdownLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	emphasis     = regexp.MustCompile(`\*([^* ]+)\*`)
)

// plainText is Markdown as plain text, for comments and JSON Schema
// descriptions: links become their text, code and emphasis marks go.
func plainText(md string) string {
	s := markdownLink.ReplaceAllString(md, "$1")
	s = emphasis.ReplaceAllString(s, "$1")
	return strings.ReplaceAll(s, "`", "")
}

// wrap splits text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	var cur string
	for _, w := range strings.Fields(text) {
		if cur != "" && len(cur)+1+len(w) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}
