//go:build xla

package loop

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // the graph DSL reads best unqualified
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// Counted builds, as one While loop of the current function,
//
//	for i := 0; i < limit; i += stride { state = body(i, state) }
//
// and returns the final state. XLA's StableHLO builder refuses an
// operation in a loop's body on a value of the enclosing function (GoMLX's
// Go backend accepts it). So the loop carries the outside values its body
// uses, unchanged, as parameters of the body, which reaches them through
// Body.Use; the body's constants are its own (ownCaches), and so are its
// reductions. Loops nest: a body may build loops of its own (newClosure).
//
// The loop's values are ordered outside, counter, state, so the state's
// last value is the While's last output: GoMLX's Go backend (v0.27.3,
// simplego's function_exec.go) sizes a function's results by its last
// output and fails on a While whose later outputs lie beyond it.
func Counted(
	g *Graph,
	limit, stride int,
	outside, state []*Node,
	body func(b *Body, i *Node, state []*Node) []*Node,
) []*Node {
	counter := shapes.Make(dtypes.Int32)
	params := func(g *Graph) []*Node { // the loop's values as parameters of a closure
		var ps []*Node
		for k, v := range outside {
			ps = append(ps, Parameter(g, fmt.Sprintf("outside%d", k), v.Shape()))
		}
		ps = append(ps, Parameter(g, "i", counter))
		for k, v := range state {
			ps = append(ps, Parameter(g, fmt.Sprintf("state%d", k), v.Shape()))
		}
		return ps
	}
	n := len(outside)
	next := newClosure(g, func(g *Graph) []*Node {
		defer ownCaches(g)()
		ps := params(g)
		b := &Body{fn: g.CurrentFunc(), carried: map[*Node]*Node{}}
		for k, v := range outside {
			b.carried[v] = ps[k]
		}
		out := body(b, ps[n], ps[n+1:])
		if len(out) != len(state) {
			panic(fmt.Errorf("gpu engine: a loop's body gave %d values for a state of %d", len(out), len(state)))
		}
		loop := append(slices.Clip(ps[:n]), Add(ps[n], Const(g, int32(stride))))
		return append(loop, b.UseAll(out)...)
	})
	more := newClosure(g, func(g *Graph) []*Node {
		return []*Node{LessThan(params(g)[n], Const(g, int32(limit)))}
	})
	init := append(append(slices.Clip(outside), Const(g, int32(0))), state...)
	return While(more, next, init...)[n+1:]
}

// newClosure is NewClosure, its backend function a closure of the current
// function's, so that loops nest. GoMLX v0.27.3 makes every closure one of
// the main function's (function.go: NewClosureWithSharding calls the
// builder's Main().Closure()), and a backend's While refuses, in a loop's
// body, closures that are not the body's own. While the closure is made,
// the graph's builder answers its first Main() with the current function
// (closeOverCurrent, in gomlx_internals.go).
func newClosure(g *Graph, def func(g *Graph) []*Node) *Function {
	current := g.CurrentFunc()
	if current.IsMain() {
		return NewClosure(g, def)
	}
	defer closeOverCurrent(g, current)() // should NewClosure not call Main()
	return NewClosure(g, def)
}

// Body is a Counted's body while it is built: its function and
// the outside values it carries, each with its parameter.
type Body struct {
	fn      *Function
	carried map[*Node]*Node // outside value -> its parameter
}

// Use is v as the body can use it: v itself if the body made it, else the
// parameter that carries it. Any other outside value is a mistake of the
// program's (panics).
func (b *Body) Use(v *Node) *Node {
	if v.Function() == b.fn {
		return v
	}
	if p, ok := b.carried[v]; ok {
		return p
	}
	panic(
		fmt.Errorf(
			"gpu engine: a loop's body uses a value of its enclosing function that the loop does not carry (%s)",
			v.Shape(),
		),
	)
}

// UseAll is Use of each value.
func (b *Body) UseAll(vs []*Node) []*Node {
	out := make([]*Node, len(vs))
	for i, v := range vs {
		out[i] = b.Use(v)
	}
	return out
}
