package scenarios

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// minimalScenario is what an empty file is told to hold: one line of valid YAML.
const minimalScenario = "{targets: {vllm: {url: http://127.0.0.1:8000/v1, model: Qwen/Qwen3-0.6B}}, " +
	"probes: {steady: {target: vllm, arrival: {rate: 0.2}}}}"

// Load reads and parses the scenario file at path; see Parse. A file that cannot
// be read gives the os error, wrapped; problems in its content give Errors.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scenario file: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes a scenario file strictly, applies defaults, resolves API keys and
// validates everything. filename names the file in errors, and relative
// api_key_file paths are taken relative to its directory. On any problem it
// returns Errors listing all of them, each with its line and column.
func Parse(data []byte, filename string) (*Config, error) {
	l := &loader{
		file:   filename,
		locs:   map[string]loc{},
		bad:    map[string]bool{},
		active: map[*yaml.Node]bool{},
	}
	root := l.document(data)
	if root == nil {
		return nil, l.errs
	}
	c := &Config{}
	l.locs[""] = loc{value: root}
	l.decode(root, "", reflect.ValueOf(c).Elem())
	c.setDefaults(l)
	c.validate(l)
	if len(l.errs) > 0 {
		return nil, l.sorted()
	}
	c.src = l
	return c, nil
}

// Check applies defaults to c and validates it, as Parse does a file's
// content, for a scenario built in code (bench builds one from its flags).
// written lists the dotted paths of the fields the builder set, leaves only:
// the others take their defaults, as fields not written in a file do. name
// names the scenario in errors, which carry no line.
func Check(c *Config, name string, written []string) error {
	l := &loader{file: name, locs: map[string]loc{"": {value: &yaml.Node{}}}, bad: map[string]bool{}, set: map[string]bool{}}
	for _, p := range written {
		for _, a := range ancestors(p) {
			l.set[a] = true
		}
	}
	c.setDefaults(l)
	c.validate(l)
	if len(l.errs) > 0 {
		return l.sorted()
	}
	c.src = l
	return nil
}

// Problems collects problems with c's fields found after loading, when a
// field's value is put to use (a key file that cannot be read, a tokenizer
// of an unsupported kind), located and ordered as Parse's own.
type Problems struct{ l loader }

// Problems returns an empty collection of problems with c.
func (c *Config) Problems() *Problems {
	if c.src == nil { // built by hand, not parsed or checked
		return &Problems{loader{locs: map[string]loc{"": {value: &yaml.Node{}}}}}
	}
	l := *c.src
	l.errs = nil
	return &Problems{l}
}

// Errorf adds a problem with the field at path.
func (p *Problems) Errorf(path, format string, args ...any) { p.l.errorf(path, format, args...) }

// Err returns the problems as Errors, in file order, or nil when there are none.
func (p *Problems) Err() error {
	if len(p.l.errs) == 0 {
		return nil
	}
	return p.l.sorted()
}

// loader holds one Parse call's state: where each field sits in the file, which
// values were rejected, and the problems found.
type loader struct {
	file string
	// locs maps a dotted field path to its key and value nodes, so checks made
	// after decoding can still point at the line.
	locs map[string]loc
	// bad holds paths whose value was already reported, so later checks stay
	// quiet about them instead of repeating the same problem in other words.
	bad map[string]bool
	// active holds the anchors being expanded, to refuse an alias inside its own anchor.
	active map[*yaml.Node]bool
	// aliasDepth, expanded and overspent bound how much aliases expand (see maxExpanded).
	aliasDepth int
	expanded   int
	overspent  bool
	errs       Errors
	// set, for a scenario built in code (Check), holds the paths written and
	// their ancestors; nil for a file, whose nodes say what is written.
	set map[string]bool
}

type loc struct{ key, value *yaml.Node }

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// document parses data into a node tree and returns its root, or nil after
// reporting why there is none: a syntax error, an empty file, or more than one
// document.
func (l *loader) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		l.syntaxError(err)
		return nil
	}
	if len(doc.Content) == 0 || doc.Content[0].ShortTag() == "!!null" {
		l.errs = append(l.errs, &Error{File: l.file, Msg: "file is empty; a minimal scenario is " + minimalScenario})
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		l.syntaxError(err)
		return nil
	default:
		l.errs = append(l.errs, &Error{File: l.file, Line: next.Line, Column: next.Column,
			Msg: "a second YAML document starts here; keep the whole scenario in one document (remove the ---)"})
		return nil
	}
	return doc.Content[0]
}

func (l *loader) syntaxError(err error) {
	e := &Error{File: l.file, Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "invalid YAML: " + m[2]
	}
	l.errs = append(l.errs, e)
}

// add reports a problem at node n.
func (l *loader) add(n *yaml.Node, path, format string, args ...any) {
	l.errs = append(l.errs, &Error{File: l.file, Line: n.Line, Column: n.Column, Field: path, Msg: fmt.Sprintf(format, args...)})
}

// reject reports a value that could not be decoded, and silences later checks of it.
func (l *loader) reject(n *yaml.Node, path, format string, args ...any) {
	l.add(n, path, format, args...)
	l.bad[path] = true
}

// errorf reports a problem found after decoding. It points at the value when
// the field holds a scalar, at the key when it holds a collection or nothing,
// and at the nearest written parent when the field is missing.
func (l *loader) errorf(path, format string, args ...any) {
	l.report(path, false, format, args...)
}

// keyErrorf is errorf for a problem with the key itself, such as a bad name.
func (l *loader) keyErrorf(path, format string, args ...any) {
	l.report(path, true, format, args...)
}

func (l *loader) report(path string, atKey bool, format string, args ...any) {
	chain := ancestors(path)
	if slices.ContainsFunc(chain, func(p string) bool { return l.bad[p] }) {
		return
	}
	for _, p := range chain {
		lc, ok := l.locs[p]
		if !ok {
			continue
		}
		n := lc.key
		if n == nil || p == path && !atKey && isScalar(lc.value) {
			n = lc.value
		}
		l.add(n, path, format, args...)
		return
	}
}

// written reports whether the field at path has a value in the file (null counts as none).
func (l *loader) written(path string) bool {
	if l.set != nil {
		return l.set[path]
	}
	lc, ok := l.locs[path]
	return ok && deref(lc.value).ShortTag() != "!!null"
}

// under returns written for the fields below prefix.
func (l *loader) under(prefix string) func(field string) bool {
	return func(field string) bool { return l.written(join(prefix, field)) }
}

// checkFile reports at path a file that is not there or not a regular
// file, with hint after the reason. Files are read when the scenario is
// built (prober.Build), not here.
func (l *loader) checkFile(path, file, hint string) {
	switch st, err := os.Stat(file); {
	case err != nil:
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		l.errorf(path, "cannot read %s: %v%s", file, err, hint)
	case !st.Mode().IsRegular():
		l.errorf(path, "%s is not a regular file%s", file, hint)
	}
}

// sorted returns the problems in file order, each once (merging one anchor
// twice into a mapping would otherwise repeat its problems).
func (l *loader) sorted() Errors {
	slices.SortStableFunc(l.errs, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return slices.CompactFunc(l.errs, func(a, b *Error) bool { return *a == *b })
}

func isScalar(n *yaml.Node) bool {
	n = deref(n)
	return n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null"
}

// deref follows aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// ancestors lists path, its parent, and so on up to the root "".
func ancestors(path string) []string {
	chain := []string{path}
	for path != "" {
		i := max(strings.LastIndexByte(path, '.'), 0)
		path = path[:i]
		chain = append(chain, path)
	}
	return chain
}
