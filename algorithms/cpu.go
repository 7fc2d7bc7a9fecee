package algorithms

import (
	"fmt"
	"slices"

	"github.com/ump-lab/ump/kinds"
)

// cpu runs an algorithm's Rules on []float32 vectors: it is the Optimizer
// New returns, and the Space its rules see.
//
// Values are lazy: arithmetic builds expressions over the vectors' buffers
// and Set records them; at a commit (a local step's gradient, the round's
// end) every pending Set is evaluated at once, worker by worker in chunks
// that stay in cache, and written in place. Mix and Average evaluate their
// argument into a spare buffer, which a Set then adopts without a copy.
// A commit makes every value read before it stale (their buffers change):
// using one afterwards panics, naming the vector.
type cpu struct {
	cfg       Config
	rules     *Rules
	kindCheck func(kinds.Values, kinds.Cell) []kinds.Problem // the kind's own rules (nil: none)
	n, dim    int
	x0        []float32
	vectors   map[string][][]float32
	grad      [][]float32
	mean      []float32     // Average's scratch
	free      [][][]float32 // spare buffers
	temps     [][][]float32 // spare buffers in use since the last commit
	pending   []binding
	vals      []*expr   // the round's vectors, by Vec.Ref
	nums      []float32 // the round's numbers, by Num.Ref
	flags     []bool    // the round's conditions, by Flag.Ref
	gen       int       // commits so far: a value's leaves must be of the current one
	r         *Round
	at        At
	step      int // the local step Steps is in (-1 outside)
	err       error
}

// binding is a pending Set.
type binding struct {
	name string
	e    *expr
}

// expr is a lazy value: a leaf (a buffer of the current commit), zero, or
// an elementwise operation.
type expr struct {
	op   op
	a, b *expr
	num  float32
	buf  [][]float32 // leaf
	name string      // leaf: what it holds, for errors
	gen  int         // leaf: the commit it belongs to
}

type op uint8

const (
	opLeaf op = iota
	opZero
	opAdd
	opSub
	opScale
	opDiv
	// compiled only: a + n b and a - n b with the product rounded first,
	// one pass where Add or Sub of a Scale would take two
	opAddScaled
	opSubScaled
)

var (
	_ Optimizer = (*cpu)(nil)
	_ Space     = (*cpu)(nil)
)

func newCPU(cfg Config, kind *kinds.Kind[*Rules], n int, x0 []float32) *cpu {
	rules := kind.New
	o := &cpu{
		cfg:       cfg,
		rules:     rules,
		step:      -1,
		kindCheck: kind.Check,
		n:         n,
		dim:       len(x0),
		x0:        x0,
		vectors:   map[string][][]float32{},
		grad:      buffers(n, len(x0), nil),
		mean:      make([]float32, len(x0)),
	}
	for _, v := range rules.Vectors {
		var start []float32
		if v.FromX0 {
			start = x0
		}
		o.vectors[v.Name] = buffers(n, len(x0), start)
	}
	return o
}

// buffers returns n copies of start (zeros when start is nil) of length dim.
func buffers(n, dim int, start []float32) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dim)
		copy(out[i], start)
	}
	return out
}

func (o *cpu) X() [][]float32 { return o.vectors["x"] }

func (o *cpu) State() map[string][][]float32 {
	out := map[string][][]float32{}
	for _, name := range o.rules.kept() {
		out[name] = o.vectors[name]
	}
	return out
}

func (o *cpu) Round(r *Round) error {
	if o.kindCheck != nil { // K is the round's, so checked here
		if problems := o.kindCheck(o.cfg.Params, kinds.Cell{Workers: o.n, LocalSteps: r.K}); len(problems) > 0 {
			return fmt.Errorf("%s", problems[0].Msg)
		}
	}
	o.r, o.at, o.err = r, At{T: r.T, K: r.K, LR: r.LR}, nil
	o.vals, o.nums, o.flags = o.vals[:0], o.nums[:0], o.flags[:0]
	o.rules.Round(o, r.K)
	o.commit()
	return o.err
}

func (o *cpu) leaf(name string, buf [][]float32) *expr {
	return &expr{op: opLeaf, buf: buf, name: name, gen: o.gen}
}

// vec, num and flag make a handle of a value; expr reads a Vec's.
func (o *cpu) vec(e *expr) Vec {
	o.vals = append(o.vals, e)
	return Vec{len(o.vals) - 1}
}

func (o *cpu) num(n float32) Num {
	o.nums = append(o.nums, n)
	return Num{len(o.nums) - 1}
}

func (o *cpu) flag(b bool) Flag {
	o.flags = append(o.flags, b)
	return Flag{len(o.flags) - 1}
}

func (o *cpu) expr(v Vec) *expr { return o.vals[v.Ref] }

func (o *cpu) Get(name string) Vec {
	for i := len(o.pending) - 1; i >= 0; i-- {
		if o.pending[i].name == name {
			return o.vec(o.pending[i].e)
		}
	}
	buf, ok := o.vectors[name]
	if !ok {
		panic(fmt.Sprintf("algorithms: %s reads vector %q, which its Rules do not declare", o.cfg.Name, name))
	}
	return o.vec(o.leaf(name, buf))
}

func (o *cpu) Set(name string, v Vec) {
	if _, ok := o.vectors[name]; !ok {
		panic(fmt.Sprintf("algorithms: %s sets vector %q, which its Rules do not declare", o.cfg.Name, name))
	}
	o.pending = slices.DeleteFunc(o.pending, func(b binding) bool { return b.name == name })
	o.pending = append(o.pending, binding{name, o.expr(v)})
}

func (o *cpu) Steps(k int, step func(tau int)) {
	defer func() { o.step = -1 }()
	for tau := range k {
		if o.err != nil { // a gradient failed (or was refused): the round ends with its error
			return
		}
		o.step = tau
		step(tau)
	}
}

func (o *cpu) FirstStep(f Flag) Flag { return o.flag(o.step == 0 && o.flags[f.Ref]) }

func (o *cpu) Grad(tau int) Vec {
	o.commit()
	if o.err == nil {
		if err := o.r.Grad(tau, o.vectors["x"], o.grad); err != nil {
			o.err = fmt.Errorf("local step %d: %w", tau+1, err)
		}
	}
	return o.vec(o.leaf("the gradient", o.grad))
}

func (o *cpu) Num(f func(Config, At) float32) Num { return o.num(f(o.cfg, o.at)) }
func (o *cpu) Flag(f func(Config, At) bool) Flag  { return o.flag(f(o.cfg, o.at)) }

func (o *cpu) Add(a, b Vec) Vec { return o.vec(&expr{op: opAdd, a: o.expr(a), b: o.expr(b)}) }
func (o *cpu) Sub(a, b Vec) Vec { return o.vec(&expr{op: opSub, a: o.expr(a), b: o.expr(b)}) }
func (o *cpu) Scale(n Num, a Vec) Vec {
	return o.vec(&expr{op: opScale, num: o.nums[n.Ref], a: o.expr(a)})
}
func (o *cpu) Div(a Vec, n Num) Vec { return o.vec(&expr{op: opDiv, num: o.nums[n.Ref], a: o.expr(a)}) }
func (o *cpu) Zero() Vec            { return o.vec(&expr{op: opZero}) }

func (o *cpu) Select(f Flag, a, b Vec) Vec {
	if o.flags[f.Ref] {
		return a
	}
	return b
}

// start is vector name's value before round 0 (nil: zeros).
func (o *cpu) start(name string) []float32 {
	for _, v := range o.rules.Vectors {
		if v.Name == name && v.FromX0 {
			return o.x0
		}
	}
	return nil
}

func (o *cpu) Mix(name string, v Vec) Vec {
	e := o.expr(v)
	if o.err != nil {
		return v
	}
	if o.r.Comm != nil { // compressed gossip, in place on a copy
		t := o.spare()
		o.evaluate([]output{{t, e}})
		o.r.Comm.Gossip(o.r.T, name, o.start(name), t, o.r.Mix)
		return o.vec(o.leaf(name, t))
	}
	src := o.materialize(e)
	t := o.spare()
	o.r.Mix.Apply(t, src)
	return o.vec(o.leaf(name, t))
}

func (o *cpu) Average(name string, v, from Vec) Vec {
	if o.err != nil {
		return v
	}
	t := o.spare()
	o.evaluate([]output{{t, o.expr(v)}})
	if o.r.Comm != nil {
		o.r.Comm.Average(o.r.T, name, t, o.materialize(o.expr(from)))
		return o.vec(o.leaf(name, t))
	}
	Mean(o.mean, t)
	Parallel(o.n, func(i int) { copy(t[i], o.mean) })
	return o.vec(o.leaf(name, t))
}

// spare returns a spare buffer, in use until the next commit (or adopted
// by a vector there).
func (o *cpu) spare() [][]float32 {
	var t [][]float32
	if k := len(o.free); k > 0 {
		t, o.free = o.free[k-1], o.free[:k-1]
	} else {
		t = buffers(o.n, o.dim, nil)
	}
	o.temps = append(o.temps, t)
	return t
}

// materialize returns a buffer holding e: its own for a leaf, else a spare
// one it is evaluated into.
func (o *cpu) materialize(e *expr) [][]float32 {
	if e.op == opLeaf {
		o.check(e)
		return e.buf
	}
	t := o.spare()
	o.evaluate([]output{{t, e}})
	return t
}

// commit evaluates the pending Sets (at once: each reads the values before
// any is written), lets vectors adopt the spare buffers Set to them, and
// makes every earlier value stale.
func (o *cpu) commit() {
	pending := o.pending
	o.pending = nil
	if o.err != nil {
		return
	}
	var outs []output
	var adopt []binding
	adopted := map[*[]float32]bool{} // by the buffer's first row
	for _, b := range pending {
		buf := o.vectors[b.name]
		switch {
		case b.e.op == opLeaf && &b.e.buf[0] == &buf[0]:
			o.check(b.e) // unchanged
		case b.e.op == opLeaf && o.isSpare(b.e.buf) && !adopted[&b.e.buf[0]]:
			o.check(b.e)
			adopted[&b.e.buf[0]] = true
			adopt = append(adopt, b)
		default:
			outs = append(outs, output{buf, b.e})
		}
	}
	o.evaluate(outs)
	for _, b := range adopt {
		o.free = append(o.free, o.vectors[b.name])
		o.vectors[b.name] = b.e.buf
	}
	for _, t := range o.temps {
		if !adopted[&t[0]] {
			o.free = append(o.free, t)
		}
	}
	o.temps = o.temps[:0]
	o.gen++
}

func (o *cpu) isSpare(buf [][]float32) bool {
	return slices.ContainsFunc(o.temps, func(t [][]float32) bool { return &t[0] == &buf[0] })
}

// check panics on a stale leaf.
func (o *cpu) check(e *expr) {
	if e.gen != o.gen {
		panic(
			fmt.Sprintf(
				"algorithms: %s uses a value of %s read before a local step's gradient; read it again with Get",
				o.cfg.Name,
				e.name,
			),
		)
	}
}

// output is a buffer to evaluate an expression into.
type output struct {
	dst [][]float32
	e   *expr
}

// chunk is how many elements of every intermediate value are computed at
// a time: they stay in the core's cache.
const chunk = 1024

// instr is an expression node in a compiled program: its operands are
// leaves' buffers or earlier nodes' slots (-1: zero).
type instr struct {
	op     op
	a, b   operand
	num    float32
	result int // slot
}

type operand struct {
	buf  [][]float32 // a leaf
	slot int         // a node's result, when buf is nil; -1 for zero
}

// evaluate computes every output's expression and writes it to its
// buffer, worker by worker (in parallel) and chunk by chunk; all of a
// chunk's values are computed (and leaves that are results copied) before
// any is written, so outputs may overwrite buffers the expressions read.
func (o *cpu) evaluate(outs []output) {
	if len(outs) == 0 {
		return
	}
	prog, results, nslots := o.compile(outs)
	stride := min(chunk, o.dim) // a small model's vectors are shorter than a chunk
	Parallel(o.n, func(i int) {
		scratch := make([]float32, (nslots+1)*stride) // the last slot: zeros
		zero := scratch[nslots*stride:]
		staged := make([]float32, len(outs)*stride)
		for lo := 0; lo < o.dim; lo += chunk {
			w := min(chunk, o.dim-lo)
			read := func(a operand) []float32 {
				switch {
				case a.buf != nil:
					return a.buf[i][lo : lo+w]
				case a.slot < 0:
					return zero[:w]
				}
				return scratch[a.slot*stride:][:w]
			}
			for _, in := range prog {
				var b []float32
				if in.op != opScale && in.op != opDiv {
					b = read(in.b)[:w]
				}
				in.exec(scratch[in.result*stride:][:w], read(in.a)[:w], b)
			}
			for k, r := range results { // a leaf result may be another output's buffer: stage it
				if r.buf != nil {
					copy(staged[k*stride:][:w], read(r))
				}
			}
			for k, out := range outs {
				from := read(results[k])
				if results[k].buf != nil {
					from = staged[k*stride:][:w]
				}
				copy(out.dst[i][lo:lo+w], from)
			}
		}
	})
}

// compile turns the outputs' expressions into a program of instructions,
// each node once (a scaled operand read once folded into its sum or
// difference), and the operand each output's value is in; nslots is how
// many scratch slots the program writes.
func (o *cpu) compile(outs []output) (prog []instr, results []operand, nslots int) {
	uses := map[*expr]int{} // how many nodes read each node
	var count func(e *expr)
	count = func(e *expr) {
		for _, in := range []*expr{e.a, e.b} {
			if in != nil {
				if uses[in]++; uses[in] == 1 {
					count(in)
				}
			}
		}
	}
	for _, out := range outs {
		if uses[out.e]++; uses[out.e] == 1 {
			count(out.e)
		}
	}
	slots := map[*expr]int{}
	var compile func(e *expr) operand
	compile = func(e *expr) operand {
		switch e.op {
		case opLeaf:
			o.check(e)
			return operand{buf: e.buf}
		case opZero:
			return operand{slot: -1}
		}
		if s, ok := slots[e]; ok {
			return operand{slot: s}
		}
		in := instr{op: e.op, num: e.num}
		switch {
		case (e.op == opAdd || e.op == opSub) && e.b.op == opScale && uses[e.b] == 1:
			in.op, in.num, in.a, in.b = opAddScaled, e.b.num, compile(e.a), compile(e.b.a)
			if e.op == opSub {
				in.op = opSubScaled
			}
		case e.op == opAdd && e.a.op == opScale && uses[e.a] == 1: // n a + b = b + n a
			in.op, in.num, in.a, in.b = opAddScaled, e.a.num, compile(e.b), compile(e.a.a)
		default:
			in.a = compile(e.a)
			if e.b != nil {
				in.b = compile(e.b)
			}
		}
		in.result = len(slots)
		slots[e] = in.result
		prog = append(prog, in)
		return operand{slot: in.result}
	}
	results = make([]operand, len(outs))
	for k, out := range outs {
		results[k] = compile(out.e)
	}
	return prog, results, len(slots)
}

// exec computes the instruction on one chunk: dst from a and b (nil for
// the operations of one operand), each element rounded on its own.
func (in *instr) exec(dst, a, b []float32) {
	n := in.num
	switch in.op {
	case opAdd:
		for j := range dst {
			dst[j] = a[j] + b[j]
		}
	case opSub:
		for j := range dst {
			dst[j] = a[j] - b[j]
		}
	case opAddScaled:
		for j := range dst {
			dst[j] = a[j] + float32(n*b[j])
		}
	case opSubScaled:
		for j := range dst {
			dst[j] = a[j] - float32(n*b[j])
		}
	case opScale:
		for j := range dst {
			dst[j] = n * a[j]
		}
	case opDiv:
		for j := range dst {
			dst[j] = a[j] / n
		}
	}
}
