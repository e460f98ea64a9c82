package scenarios

import (
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Marshal writes the fields of c at paths (dotted, as Check takes them) as a
// scenario file; the fields it leaves out take their defaults when the file
// is read back.
func Marshal(c *Config, paths []string) ([]byte, error) {
	root := map[string]any{}
	for _, p := range paths {
		parts := strings.Split(p, ".")
		v, err := fieldAt(reflect.ValueOf(c), parts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		m := root
		for _, part := range parts[:len(parts)-1] {
			next, ok := m[part].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[part] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = v.Interface()
	}
	return yaml.Marshal(root)
}

// fieldAt follows parts from v: struct fields by their yaml names, map
// entries by key, through pointers.
func fieldAt(v reflect.Value, parts []string) (reflect.Value, error) {
	for _, part := range parts {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return v, fmt.Errorf("%s is under an unset field", part)
			}
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.Struct:
			i := fieldByYAMLName(v.Type(), part)
			if i < 0 {
				return v, fmt.Errorf("no field %s in %s", part, v.Type())
			}
			v = v.Field(i)
		case reflect.Map:
			e := v.MapIndex(reflect.ValueOf(part))
			if !e.IsValid() {
				return v, fmt.Errorf("no entry %s", part)
			}
			v = e
		default:
			return v, fmt.Errorf("%s is under a %s", part, v.Kind())
		}
	}
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	return v, nil
}

func fieldByYAMLName(t reflect.Type, name string) int {
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag == name {
			return i
		}
	}
	return -1
}
