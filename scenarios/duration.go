package scenarios

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// UnmarshalYAML parses a Go duration such as 500ms or 1m30s. A bare number is
// refused: "30" could mean seconds or milliseconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("must be a duration such as 30s, not %s", describe(n))
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("invalid duration %q; write a number with a unit, e.g. 500ms, 30s or 2m", n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes d the way UnmarshalYAML reads it.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// String formats d as time.Duration does, e.g. 1m30s.
func (d Duration) String() string { return time.Duration(d).String() }
