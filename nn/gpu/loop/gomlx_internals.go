//go:build xla

package loop

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
)

// This file is the one place ump reaches into GoMLX's private fields, with
// reflect and unsafe, because v0.27.3 offers no public way to do either:
//
//   - make a closure of the current function rather than of the main one
//     (graph.builder, Function.backendFunc): closeOverCurrent;
//   - give a loop body its own caches of constants and reductions, which
//     GoMLX keeps per graph (graph.scalars, and the XLA builder's
//     cacheReductions, cacheArgMinMax, cacheSelections): ownCaches.
//
// It was written for gomlxVersion; TestGoMLXIsTheVersionTheShimKnows
// fails on any other, naming what to check. Upstream, NewClosureWithSharding
// taking g.currentFunc.backendFunc.Closure() instead of
// g.builder.Main().Closure(), and caches kept per Function, would make it
// unnecessary (docs/gpu.md, "Loops and GoMLX's internals").

// closeOverCurrent makes g's builder answer its next Main() with current's
// backend function, once; restore puts the builder back whether or not
// Main() was called.
func closeOverCurrent(g *Graph, current *Function) (restore func()) {
	builder := field(reflect.ValueOf(g).Elem(), "builder")
	fn := field(reflect.ValueOf(current).Elem(), "backendFunc")
	if !builder.IsValid() || !fn.IsValid() {
		panic(fmt.Errorf("gpu engine: GoMLX's Graph has no builder or its Function no backendFunc; "+
			"nn/gpu/loop/gomlx_internals.go was written for GoMLX %s", gomlxVersion))
	}
	real := builder.Interface().(backends.Builder)
	put := func() { builder.Set(reflect.ValueOf(&real).Elem()) }
	builder.Set(reflect.ValueOf(&currentAsMain{Builder: real, fn: fn.Interface().(backends.Function), restore: put}))
	return put
}

// currentAsMain is a builder whose Main() is, once, another function.
type currentAsMain struct {
	backends.Builder
	fn      backends.Function
	restore func()
}

func (b *currentAsMain) Main() backends.Function {
	b.restore()
	return b.fn
}

// ownCaches gives a loop body, while it is built, empty caches of what
// GoMLX keeps once per graph rather than per function, and restores the
// enclosing function's when the returned function is called. Those are
// the graph's scalar constants (graph.go, scalarCache) and, on XLA, the
// builder's reduction, arg-min/max and selection functions
// (backends/xla/builder.go). With the enclosing function's, the body
// would use its constants (a ReLU's zero, a MulScalar's factor) and its
// reduction functions, which XLA's builder refuses; with caches of its
// own, the body makes its own.
func ownCaches(g *Graph) (restore func()) {
	caches := []reflect.Value{field(reflect.ValueOf(g).Elem(), "scalars")}
	if !caches[0].IsValid() {
		panic(fmt.Errorf("gpu engine: GoMLX's Graph has no scalar cache (field scalars) to give a loop body "+
			"its own; nn/gpu/loop/gomlx_internals.go was written for GoMLX %s", gomlxVersion))
	}
	if builder := field(reflect.ValueOf(g).Elem(), "builder"); builder.IsValid() && !builder.IsNil() &&
		builder.Elem().Kind() == reflect.Pointer {
		for _, name := range []string{"cacheReductions", "cacheArgMinMax", "cacheSelections"} { // XLA's builder only
			if c := field(builder.Elem().Elem(), name); c.IsValid() {
				caches = append(caches, c)
			}
		}
	}
	saved := make([]reflect.Value, len(caches))
	for i, c := range caches {
		saved[i] = reflect.ValueOf(c.Interface())
		c.Set(reflect.MakeMap(c.Type()))
	}
	return func() {
		for i, c := range caches {
			c.Set(saved[i])
		}
	}
}

// field is a struct's field of that name, if it is a map or an
// interface, made settable; the zero Value otherwise.
func field(v reflect.Value, name string) reflect.Value {
	if v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	f := v.FieldByName(name)
	if !f.IsValid() || (f.Kind() != reflect.Map && f.Kind() != reflect.Interface) || !f.CanAddr() {
		return reflect.Value{}
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}
