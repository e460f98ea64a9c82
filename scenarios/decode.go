package scenarios

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// maxExpanded bounds the values that aliases may expand to. The schema is
// shallow except for params, where a few lines of nested aliases could
// otherwise expand to gigabytes ("billion laughs").
const maxExpanded = 10000

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// decode walks node n into out, which has one of the schema's types, by the
// yaml tags of its structs. Walking the node tree ourselves, rather than
// yaml.Unmarshal, keeps every position and lets one pass report every unknown
// field, type error and duplicate key instead of stopping at the first.
func (l *loader) decode(n *yaml.Node, path string, out reflect.Value) {
	if n.Kind == yaml.AliasNode {
		l.alias(n, path, func(target *yaml.Node) { l.decode(target, path, out) })
		return
	}
	if !l.spend(n, path, 1) {
		return
	}
	if n.ShortTag() == "!!null" {
		return // as if not written; defaults apply
	}
	if out.CanAddr() && out.Addr().Type().Implements(unmarshalerType) {
		if err := out.Addr().Interface().(yaml.Unmarshaler).UnmarshalYAML(n); err != nil {
			l.reject(n, path, "%s", err)
		}
		return
	}
	switch out.Kind() {
	case reflect.Pointer:
		if out.IsNil() {
			out.Set(reflect.New(out.Type().Elem()))
		}
		l.decode(n, path, out.Elem())
	case reflect.Struct:
		l.decodeStruct(n, path, out)
	case reflect.Map:
		l.decodeMap(n, path, out)
	case reflect.Slice:
		l.decodeList(n, path, out)
	case reflect.Interface:
		l.decodeAny(n, path, out)
	case reflect.String:
		if n.Kind == yaml.ScalarNode {
			out.SetString(n.Value) // a number or bool is fine as text, e.g. a header value
		} else {
			l.typeError(n, path, "a string")
		}
	case reflect.Bool:
		var b bool
		if l.scalar(n, path, &b, "true or false", "!!bool") {
			out.SetBool(b)
		}
	case reflect.Float64:
		var f float64
		if l.scalar(n, path, &f, "a number", "!!int", "!!float") {
			out.SetFloat(f)
		}
	case reflect.Uint64:
		var u uint64
		if l.scalar(n, path, &u, "a whole number >= 0", "!!int") {
			out.SetUint(u)
		}
	case reflect.Int:
		var i int
		if l.scalar(n, path, &i, "a whole number", "!!int") {
			out.SetInt(int64(i))
		}
	default:
		panic(fmt.Sprintf("scenarios: no decoding for %s at %s", out.Type(), path))
	}
}

func (l *loader) decodeStruct(n *yaml.Node, path string, out reflect.Value) {
	names, index := fields(out.Type())
	if n.Kind != yaml.MappingNode {
		l.typeError(n, path, "a mapping with the fields "+strings.Join(names, ", "))
		return
	}
	pairs := l.pairs(n, path)
	present := map[string]bool{}
	for _, p := range pairs {
		present[p.key.Value] = true
	}
	for _, p := range pairs {
		name := p.key.Value
		i, ok := index[name]
		if !ok {
			if homes := fieldHomes()[name]; len(homes) > 0 {
				// Written by habit in the wrong section: say which one.
				l.add(p.key, path, "unknown field %q here; it belongs in %s", name, orList(homes))
				continue
			}
			if s := suggest(name, names); s != "" {
				l.add(p.key, path, "unknown field %q; did you mean %q?", name, s)
				if !present[s] {
					// The typo is the problem; "s is required" would say it twice.
					l.bad[join(path, s)] = true
				}
			} else {
				l.add(p.key, path, "unknown field %q; valid fields: %s", name, strings.Join(names, ", "))
			}
			continue
		}
		fp := join(path, name)
		l.locs[fp] = loc(p)
		l.decode(p.value, fp, out.Field(i))
	}
}

// decodeMap decodes a mapping of names, such as targets or headers.
func (l *loader) decodeMap(n *yaml.Node, path string, out reflect.Value) {
	et := out.Type().Elem()
	if n.Kind != yaml.MappingNode {
		want := "a mapping of name: value pairs"
		if et.Kind() == reflect.Pointer {
			want = "a mapping from names to their settings"
		}
		l.typeError(n, path, want)
		return
	}
	if out.IsNil() {
		out.Set(reflect.MakeMap(out.Type()))
	}
	for _, p := range l.pairs(n, path) {
		fp := join(path, p.key.Value)
		l.locs[fp] = loc(p)
		v := reflect.New(et).Elem()
		if et.Kind() == reflect.Pointer {
			// An entry exists even when written empty, so its missing fields get reported.
			v.Set(reflect.New(et.Elem()))
		}
		l.decode(p.value, fp, v)
		out.SetMapIndex(reflect.ValueOf(p.key.Value), v)
	}
}

// decodeList decodes a list, such as a rate series. Each element is recorded
// as path[i], so later checks can point at it.
func (l *loader) decodeList(n *yaml.Node, path string, out reflect.Value) {
	if n.Kind != yaml.SequenceNode {
		l.typeError(n, path, "a list")
		return
	}
	s := reflect.MakeSlice(out.Type(), len(n.Content), len(n.Content))
	for i, e := range n.Content {
		ep := fmt.Sprintf("%s[%d]", path, i)
		l.locs[ep] = loc{value: e}
		l.decode(e, ep, s.Index(i))
	}
	out.Set(s)
}

// decodeAny decodes free-form values (params) into what encoding/json
// marshals as the same JSON: map[string]any, []any, string, bool, numbers, nil.
func (l *loader) decodeAny(n *yaml.Node, path string, out reflect.Value) {
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		l.decodeMap(n, path, reflect.ValueOf(m))
		out.Set(reflect.ValueOf(m))
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, e := range n.Content {
			l.decode(e, fmt.Sprintf("%s[%d]", path, i), reflect.ValueOf(&s[i]).Elem())
		}
		out.Set(reflect.ValueOf(s))
	default:
		var v any
		switch {
		case n.ShortTag() == "!!timestamp":
			v = n.Value // yaml would make a time.Time; the server should get what was written
		case !l.scalar(n, path, &v, "a JSON value"):
			return
		}
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			l.reject(n, path, "%s cannot be sent: JSON has no NaN or infinity", n.Value)
			return
		}
		out.Set(reflect.ValueOf(v))
	}
}

// scalar decodes scalar n into v if it has one of tags (any tag when none are
// given) and is in v's range, and reports a type error if not. The tag check
// keeps yaml from converting, say, the string "4" into a number.
func (l *loader) scalar(n *yaml.Node, path string, v any, want string, tags ...string) bool {
	if n.Kind == yaml.ScalarNode && (len(tags) == 0 || slices.Contains(tags, n.ShortTag())) && n.Decode(v) == nil {
		return true
	}
	l.typeError(n, path, want, tags...)
	return false
}

func (l *loader) typeError(n *yaml.Node, path, want string, tags ...string) {
	msg := "must be " + want + ", not " + describe(n)
	if n.Kind == yaml.ScalarNode && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		plain := yaml.Node{Kind: yaml.ScalarNode, Value: n.Value}
		if slices.Contains(tags, plain.ShortTag()) {
			msg += "; remove the quotes"
		}
	}
	if path == "" {
		msg = "the file " + msg
	}
	l.reject(n, path, "%s", msg)
}

// describe names what a node holds, for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if n.ShortTag() == "!!str" {
		return fmt.Sprintf("the string %q", n.Value)
	}
	return n.Value
}

type pair struct{ key, value *yaml.Node }

// pairs lists a mapping's entries, reporting duplicate and non-scalar keys.
// YAML merge keys (<<: *defaults) are expanded; an entry written in the
// mapping wins over a merged one, and earlier merged mappings over later ones.
func (l *loader) pairs(n *yaml.Node, path string) []pair {
	if !l.spend(n, path, len(n.Content)/2) {
		return nil
	}
	var own, merged []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge":
			merged = append(merged, l.merge(v, path)...)
		case k.Kind != yaml.ScalarNode:
			l.add(k, path, "keys must be names, not %s", describe(k))
		case seen[k.Value] != nil:
			l.add(k, path, "duplicate key %q; it is already set on line %d", k.Value, seen[k.Value].Line)
		default:
			seen[k.Value] = k
			own = append(own, pair{k, v})
		}
	}
	for _, p := range merged {
		if seen[p.key.Value] == nil {
			seen[p.key.Value] = p.key
			own = append(own, p)
		}
	}
	return own
}

// merge lists the entries that a merge key's value brings in.
func (l *loader) merge(v *yaml.Node, path string) []pair {
	var out []pair
	switch v.Kind {
	case yaml.AliasNode:
		l.alias(v, path, func(target *yaml.Node) { out = l.merge(target, path) })
	case yaml.MappingNode:
		out = l.pairs(v, path)
	case yaml.SequenceNode:
		for _, e := range v.Content {
			out = append(out, l.merge(e, path)...)
		}
	default:
		l.add(v, path, "<< must be followed by a mapping or a list of them, e.g. <<: *defaults, not %s", describe(v))
	}
	return out
}

// alias walks the node an alias names, refusing one that sits inside its own
// anchor, which would never end.
func (l *loader) alias(n *yaml.Node, path string, walk func(*yaml.Node)) {
	if l.active[n.Alias] {
		l.reject(n, path, "alias *%s is inside its own anchor &%s", n.Value, n.Value)
		return
	}
	l.active[n.Alias] = true
	l.aliasDepth++
	walk(n.Alias)
	l.aliasDepth--
	delete(l.active, n.Alias)
}

// spend counts count values reached through aliases (and merges of aliases),
// and reports false once they pass maxExpanded.
func (l *loader) spend(n *yaml.Node, path string, count int) bool {
	if l.aliasDepth == 0 {
		return true
	}
	l.expanded += count
	if l.expanded <= maxExpanded {
		return true
	}
	if !l.overspent {
		l.overspent = true
		l.reject(n, path, "aliases expand to more than %d values; write the values out instead", maxExpanded)
	}
	return false
}

// fields lists the yaml field names of struct type t and their field indexes.
func fields(t reflect.Type) ([]string, map[string]int) {
	var names []string
	index := map[string]int{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		names = append(names, name)
		index[name] = i
	}
	return names, index
}

// fieldHomes maps every field name of the scenario file to where it may be
// written, as patterns such as targets.NAME.timeout.
var fieldHomes = sync.OnceValue(func() map[string][]string {
	homes := map[string][]string{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			walk(t.Elem(), join(path, "NAME"))
		case reflect.Slice:
			walk(t.Elem(), path+"[i]")
		case reflect.Struct:
			names, index := fields(t)
			for _, name := range names {
				fp := join(path, name)
				homes[name] = append(homes[name], fp)
				walk(t.Field(index[name]).Type, fp)
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return homes
})

// orList writes up to three items as "a, b or c", saying how many more.
func orList(items []string) string {
	const most = 3
	more := ""
	if len(items) > most {
		more = fmt.Sprintf(" (and %d more places)", len(items)-most)
		items = items[:most]
	}
	if len(items) == 1 {
		return items[0] + more
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1] + more
}
