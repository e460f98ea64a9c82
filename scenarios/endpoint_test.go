package scenarios

import (
	"slices"
	"testing"
)

// TestRegisterEndpoint: names are listed sorted whatever the registration
// order, the key defaults to a bearer token, and an empty or taken name
// panics. The prober's registrations (endpoints_external_test.go) are here.
func TestRegisterEndpoint(t *testing.T) {
	names := EndpointNames()
	if len(names) == 0 || !slices.IsSorted(names) {
		t.Fatalf("EndpointNames() = %v, want the prober's types, sorted", names)
	}
	if e, ok := LookupEndpoint(DefaultEndpoint); !ok || e.APIKeyHeader != "Authorization" || e.APIKeyPrefix != "Bearer " {
		t.Errorf("LookupEndpoint(%q) = %+v, %v; want it registered, with the key as a bearer token", DefaultEndpoint, e, ok)
	}
	for _, e := range []EndpointType{{}, {Name: DefaultEndpoint}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterEndpoint(%+v) did not panic", e)
				}
			}()
			RegisterEndpoint(e)
		}()
	}
	if !slices.Equal(EndpointNames(), names) {
		t.Errorf("after refused registrations, EndpointNames() = %v, want %v", EndpointNames(), names)
	}
}
