package scenarios

import (
	"slices"
	"strings"
)

// DefaultEndpoint is the endpoint type of a target that names none.
const DefaultEndpoint = "chat"

// EndpointType describes one value of a target's endpoint. Each is declared
// in its own file of the prober, which registers it with its codec; a
// program that loads scenarios links the prober, or knows no endpoint type.
type EndpointType struct {
	Name string
	// Path is what the prober appends to the target's url.
	Path string
	// StreamPath replaces Path when the request streams (TGI's
	// /generate_stream); "" keeps Path.
	StreamPath string
	// Streams is whether the API streams; the others ignore stream.
	Streams bool
	// AtRoot is whether the API sits at the server root rather than under a
	// versioned prefix such as /v1 (TGI, TEI).
	AtRoot bool
	// Version is the versioned prefix a bare server URL gets when the API
	// is not AtRoot; "" is /v1 (Cohere's rerank is /v2, as in AIPerf).
	Version string
	// APIKeyHeader carries the API key, written as APIKeyPrefix followed by
	// the key; without an APIKeyHeader, "Authorization: Bearer KEY".
	APIKeyHeader string
	APIKeyPrefix string
	// Headers are sent unless the target's headers set them.
	Headers map[string]string
	// MaxTokensField is whether the target may choose max_tokens_field.
	MaxTokensField bool
	// NeedsTemplate is whether the target's template describes the API, its
	// path included; a template is refused elsewhere.
	NeedsTemplate bool
	// Ranks is whether the API ranks passages against a query, so that a
	// synthetic dataset may draw them (Synthetic.Rankings).
	Ranks       bool
	Description string
}

// PathFor is the path a request goes to, streamed or not.
func (e EndpointType) PathFor(stream bool) string {
	if stream && e.StreamPath != "" {
		return e.StreamPath
	}
	return e.Path
}

// endpointTypes holds the registered endpoint types sorted by name, so that
// lists and help texts do not depend on the order of registration.
var endpointTypes []EndpointType

// RegisterEndpoint adds an endpoint type. It is called from init functions;
// an empty or taken name is a programming error and panics.
func RegisterEndpoint(e EndpointType) {
	if e.Name == "" {
		panic("scenarios: RegisterEndpoint with an empty name")
	}
	i, found := slices.BinarySearchFunc(endpointTypes, e.Name, byName)
	if found {
		panic("scenarios: endpoint type " + e.Name + " registered twice")
	}
	if e.APIKeyHeader == "" {
		e.APIKeyHeader, e.APIKeyPrefix = "Authorization", "Bearer "
	}
	endpointTypes = slices.Insert(endpointTypes, i, e)
}

func byName(e EndpointType, name string) int { return strings.Compare(e.Name, name) }

// LookupEndpoint returns the endpoint type called name.
func LookupEndpoint(name string) (EndpointType, bool) {
	i, found := slices.BinarySearchFunc(endpointTypes, name, byName)
	if !found {
		return EndpointType{}, false
	}
	return endpointTypes[i], true
}

// EndpointNames lists the names of the endpoint types, sorted.
func EndpointNames() []string {
	return endpointNamesWhere(func(EndpointType) bool { return true })
}

// endpointNamesWhere lists the names of the endpoint types that have a
// property, for messages that say where a field applies.
func endpointNamesWhere(has func(EndpointType) bool) []string {
	var names []string
	for _, e := range endpointTypes {
		if has(e) {
			names = append(names, e.Name)
		}
	}
	return names
}

// EndpointHelp describes every endpoint type in one line of text, for
// command-line help: "chat (OpenAI chat completions, …); completions (…); …".
func EndpointHelp() string {
	parts := make([]string, len(endpointTypes))
	for i, e := range endpointTypes {
		parts[i] = e.Name + " (" + e.Description + ")"
	}
	return strings.Join(parts, "; ")
}

// APIKeyHeader is the header that carries the API key.
func (t *Target) APIKeyHeader() string {
	e, _ := LookupEndpoint(t.Endpoint)
	return e.APIKeyHeader
}

// apiKeyForm shows how the API key is sent.
func (t *Target) apiKeyForm() string {
	e, _ := LookupEndpoint(t.Endpoint)
	return e.APIKeyHeader + ": " + e.APIKeyPrefix + "KEY"
}
