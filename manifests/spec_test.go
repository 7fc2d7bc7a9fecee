package manifests

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// notInSpec are the fields of a cell's configuration that cannot change
// its trained model's bits, so that they stay out of the cell key: the
// manifest's name and sweep, how often to evaluate and checkpoint, and
// how `ump table` presents results.
var notInSpec = map[string]bool{
	"Name":       true,
	"Sweep":      true,
	"Add":        true,
	"Evaluate":   true,
	"Checkpoint": true,
	"Table":      true,
}

// TestSpecHoldsEveryFieldButThoseThatCannotChangeTheNumbers changes every
// field of a cell's configuration, one at a time and at every depth, and
// checks that the cell's spec (which enters the cell key) changes, except
// for the fields of notInSpec, which must leave it unchanged.
func TestSpecHoldsEveryFieldButThoseThatCannotChangeTheNumbers(t *testing.T) {
	plan, err := Parse("t.yaml", []byte(`version: 1
name: spec
task: {dataset: mnist, model: lenet}
workers: 4
rounds: 3
lr: 0.1
algorithm: {name: d-sum}
`))
	if err != nil {
		t.Fatal(err)
	}
	base := plan.Cells[0]
	checked := 0
	var visit func(path string, v reflect.Value)
	visit = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if f := v.Type().Field(i); f.IsExported() {
					visit(strings.TrimPrefix(path+"."+f.Name, "."), v.Field(i))
				}
			}
			return
		case reflect.Pointer:
			if v.IsNil() {
				spec := base.Spec()
				v.Set(reflect.New(v.Type().Elem()))
				if !notInSpec[strings.Split(path, ".")[0]] {
					checkChanged(t, path+" (set)", base, spec)
				}
			}
			visit(path, v.Elem())
			return
		}
		spec := base.Spec()
		switch v.Kind() {
		case reflect.Int:
			v.SetInt(v.Int() + 7)
		case reflect.Float64:
			v.SetFloat(v.Float() + 0.25)
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Map, reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Interface || v.Kind() == reflect.Map {
				v.Set(reflect.MakeMap(v.Type()))
				v.SetMapIndex(reflect.ValueOf("x").Convert(v.Type().Key()), reflect.Zero(v.Type().Elem()))
			} else {
				v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
			}
		default:
			t.Fatalf("%s: a field of kind %s this test cannot change", path, v.Kind())
		}
		checked++
		top := strings.Split(path, ".")[0]
		if notInSpec[top] {
			if !bytes.Equal(base.Spec(), spec) {
				t.Errorf(
					"changing %s changed the cell's spec: it cannot change the numbers, so it must stay out of the "+
						"cell key",
					path,
				)
			}
		} else {
			checkChanged(t, path, base, spec)
		}
	}
	visit("", reflect.ValueOf(&base.Config).Elem())
	if checked < 30 {
		t.Errorf("changed only %d fields: the walk does not reach the configuration", checked)
	}
}

func checkChanged(t *testing.T, path string, c Cell, spec []byte) {
	t.Helper()
	if bytes.Equal(c.Spec(), spec) {
		t.Errorf(
			"changing %s left the cell's spec unchanged: two cells that compute differently would share a key",
			path,
		)
	}
}
