// Package recordtest helps test the encodings of a record.Record.
package recordtest

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/inferprobe/inferprobe/record"
)

// Full is a record with every field set, each to a value no other field
// holds. It sets the fields by reflection, so a field added to Record is set
// too, and a codec that does not carry it fails its round trip (Diff).
func Full() *record.Record {
	rec := &record.Record{}
	n := 0
	fill(reflect.ValueOf(rec).Elem(), &n)
	return rec
}

// valid holds, for each enumeration a codec checks or spells out, a value
// other than its zero: any other number would be refused or misread.
var valid = map[reflect.Type]reflect.Value{
	reflect.TypeFor[record.Outcome]():     reflect.ValueOf(record.OutcomeCancelled),
	reflect.TypeFor[record.Reason]():      reflect.ValueOf(record.ReasonStall),
	reflect.TypeFor[record.TokenSource](): reflect.ValueOf(record.TokensFromTokenizer),
	reflect.TypeFor[record.ConnOrigin]():  reflect.ValueOf(record.ConnOpenedAhead),
	reflect.TypeFor[record.Encoding]():    reflect.ValueOf(record.EncodingZstd),
}

// fill sets v and everything in it to values not zero, counting with n so
// that no two are alike (bytes wrap after 255).
func fill(v reflect.Value, n *int) {
	if e, ok := valid[v.Type()]; ok {
		v.Set(e)
		return
	}
	*n++
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 12, 4, 5, 0, *n, *n, time.UTC)))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 3, 3)
		for i := range s.Len() {
			fill(s.Index(i), n)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), n)
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n%255 + 1))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	default:
		panic(fmt.Sprintf("recordtest: no value for a field of type %s: teach fill one", v.Type()))
	}
}

// Diff names the fields of Record in which got differs from want, but for
// those in skip. Times are compared as instants: a codec need not keep
// their location or monotonic reading.
func Diff(got, want *record.Record, skip ...string) []string {
	g, w := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	var differ []string
	for i := range g.NumField() {
		name := g.Type().Field(i).Name
		if slices.Contains(skip, name) {
			continue
		}
		a, b := g.Field(i).Interface(), w.Field(i).Interface()
		if ta, ok := a.(time.Time); ok {
			if !ta.Equal(b.(time.Time)) {
				differ = append(differ, name)
			}
		} else if !reflect.DeepEqual(a, b) {
			differ = append(differ, name)
		}
	}
	return differ
}
