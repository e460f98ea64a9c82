package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// jinjaSupport says, in refusals, what FromJinja reads and what to do instead.
const jinjaSupport = "bench reads {{ NAME|tojson }} as a whole JSON value and {{ NAME }} inside a string, for text, texts, model, max_tokens and stream; for anything else write a template endpoint in a scenario file (inferprobe serve)"

// jinjaVars maps an AIPerf 0.13 template variable to the engine's
// placeholder as a whole value. texts is the request's texts: bench sends
// one text a request, so it is a one-element array of the prompt.
var jinjaVars = map[string]any{
	"text":       PlaceholderPrompt,
	"texts":      []any{PlaceholderPrompt},
	"model":      PlaceholderModel,
	"max_tokens": PlaceholderMaxTokens,
	"stream":     PlaceholderStream,
}

// jinjaInString maps the variables that may stand inside a string.
var jinjaInString = map[string]string{
	"text":       PlaceholderPrompt,
	"model":      PlaceholderModel,
	"max_tokens": PlaceholderMaxTokens,
}

var jinjaExpr = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\|\s*tojson\s*)?\}\}`)

// FromJinja translates the subset of an AIPerf 0.13 payload_template
// (Jinja) that its tutorials use into a template body with placeholders.
func FromJinja(src string) (map[string]any, error) {
	if strings.Contains(src, "{%") || strings.Contains(src, "{#") {
		return nil, fmt.Errorf("payload_template has a Jinja block ({%% %%} or {# #}); %s", jinjaSupport)
	}
	// Each expression becomes a JSON string standing for it, marked so that
	// no literal text is taken for one; the JSON is then read and the marks
	// replaced.
	const mark = "\x00jinja:"
	var bad error
	inString := func(i int) bool {
		// Inside a JSON string when an odd number of unescaped quotes precede.
		n := 0
		for j := 0; j < i; j++ {
			switch src[j] {
			case '\\':
				j++
			case '"':
				n++
			}
		}
		return n%2 == 1
	}
	var b strings.Builder
	last := 0
	for _, m := range jinjaExpr.FindAllStringSubmatchIndex(src, -1) {
		b.WriteString(src[last:m[0]])
		last = m[1]
		name, tojson := src[m[2]:m[3]], m[4] >= 0
		if _, ok := jinjaVars[name]; !ok {
			bad = fmt.Errorf("payload_template uses variable %q; %s", name, jinjaSupport)
			break
		}
		switch in := inString(m[0]); {
		case in && !tojson:
			ph, ok := jinjaInString[name]
			if !ok {
				bad = fmt.Errorf("payload_template puts {{ %s }} inside a string; %s", name, jinjaSupport)
			}
			b.WriteString(ph)
		case !in && tojson:
			q, _ := json.Marshal(mark + name)
			b.Write(q)
		default:
			bad = fmt.Errorf("payload_template has %q %s a string; %s", src[m[0]:m[1]], map[bool]string{true: "inside", false: "outside"}[in], jinjaSupport)
		}
		if bad != nil {
			break
		}
	}
	if bad != nil {
		return nil, bad
	}
	b.WriteString(src[last:])
	rest := b.String()
	if strings.Contains(rest, "{{") && !containsOnlyPlaceholders(rest) {
		return nil, fmt.Errorf("payload_template has an expression bench does not read; %s", jinjaSupport)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(rest), &body); err != nil {
		return nil, fmt.Errorf("payload_template is not a JSON object once its expressions are filled: %v", err)
	}
	var fill func(v any) any
	fill = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = fill(e)
			}
		case []any:
			for i, e := range x {
				x[i] = fill(e)
			}
		case string:
			if name, ok := strings.CutPrefix(x, mark); ok {
				return jinjaVars[name]
			}
		}
		return v
	}
	return fill(body).(map[string]any), nil
}

// containsOnlyPlaceholders reports whether every {{ in s opens one of the
// engine's placeholders that FromJinja wrote.
func containsOnlyPlaceholders(s string) bool {
	for _, ph := range placeholders {
		s = strings.ReplaceAll(s, ph, "")
	}
	return !strings.Contains(s, "{{")
}

var jmesIndex = regexp.MustCompile(`\[(\d+)\]`)
var dottedPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.([A-Za-z_][A-Za-z0-9_]*|\d+))*$`)

// TextPathFromJMESPath translates AIPerf's response_field, a JMESPath
// query, into a text path when it is keys and [N] indexes only.
func TextPathFromJMESPath(q string) (string, error) {
	p := jmesIndex.ReplaceAllString(q, ".$1")
	if !dottedPath.MatchString(p) {
		return "", fmt.Errorf("response_field %q: bench reads JMESPath keys and [N] indexes only, e.g. choices[0].text; for more write a template endpoint in a scenario file (inferprobe serve)", q)
	}
	return p, nil
}

// aiperfNamedTemplates are the payload templates AIPerf 0.13 ships by name.
var aiperfNamedTemplates = map[string]string{
	"nv-embedqa": `{"text": {{ texts|tojson }}}`,
}

// FromAIPerfPayloadTemplate reads payload_template as AIPerf 0.13 does: a
// template it ships by name, else a file's path, else the template itself.
func FromAIPerfPayloadTemplate(v string) (map[string]any, error) {
	src, ok := aiperfNamedTemplates[v]
	if !ok {
		src = v
		if data, err := os.ReadFile(v); err == nil {
			src = string(data)
		}
	}
	return FromJinja(src)
}
