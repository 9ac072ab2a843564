// Package postdom computes post-dominator trees of SSA functions and, from
// them, control dependence: which blocks a branch decides.
package postdom

import "golang.org/x/tools/go/ssa"

// A Tree is the post-dominator tree of a function's control-flow graph,
// for control dependence: which blocks a branch decides.
//
// The graph has a virtual exit that every block without successors leads
// to: returns, panics, and calls that never return (SSA ends their block
// with a panic, from the noreturn facts). A loop that never exits (for {}
// without a return or a break) reaches no exit; each such loop gets a
// virtual node before its head (its first block) that the loop's back
// edges lead to and that leads to the head and to the exit, as if the loop
// could end before each iteration. Then every block post-dominates the
// blocks that its iteration must pass, and a branch at the end of the head
// does not control the head's own earlier instructions.
//
// Nodes 0 to n-1 are the function's blocks, by index; node n is the exit;
// the nodes after it stand before the heads of loops that never exit.
type Tree struct {
	n     int
	succs [][]int // each node's successors, the virtual edges included
	ipdom []int   // each node's immediate post-dominator; the exit's is itself
}

// New builds the post-dominator tree of fn.
func New(fn *ssa.Function) *Tree {
	n := len(fn.Blocks)
	p := &Tree{n: n, succs: make([][]int, n+1)}
	for _, b := range fn.Blocks {
		if len(b.Succs) == 0 {
			p.succs[b.Index] = []int{n}
			continue
		}
		for _, s := range b.Succs {
			p.succs[b.Index] = append(p.succs[b.Index], s.Index)
		}
	}
	p.breakEndlessLoops()
	p.build()
	return p
}

// preds returns each node's predecessors.
func (p *Tree) preds() [][]int {
	preds := make([][]int, len(p.succs))
	for v, ss := range p.succs {
		for _, s := range ss {
			preds[s] = append(preds[s], v)
		}
	}
	return preds
}

// fromExit returns the nodes that reach the exit, in post-order of a
// depth-first search from the exit against the edges.
func (p *Tree) fromExit() []int {
	preds := p.preds()
	seen := make([]bool, len(p.succs))
	var order []int
	type frame struct{ v, next int }
	stack := []frame{{v: p.n}}
	seen[p.n] = true
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(preds[top.v]) {
			w := preds[top.v][top.next]
			top.next++
			if !seen[w] {
				seen[w] = true
				stack = append(stack, frame{v: w})
			}
			continue
		}
		order = append(order, top.v)
		stack = stack[:len(stack)-1]
	}
	return order
}

// breakEndlessLoops gives each loop that reaches no exit a virtual node
// before its head: the blocks that reach no exit form strongly connected
// components, and those that no edge leaves are the endless loops (every
// other such block leads into one).
func (p *Tree) breakEndlessLoops() {
	reaches := make([]bool, p.n+1)
	order := p.fromExit()
	if len(order) == p.n+1 {
		return // the common case: every block reaches the exit
	}
	for _, v := range order {
		reaches[v] = true
	}
	for _, scc := range p.components(reaches) {
		in := make(map[int]bool, len(scc))
		for _, v := range scc {
			in[v] = true
		}
		sink := true
		head := scc[0]
		for _, v := range scc {
			head = min(head, v)
			for _, s := range p.succs[v] {
				sink = sink && in[s]
			}
		}
		if !sink {
			continue
		}
		pre := len(p.succs)
		p.succs = append(p.succs, []int{head, p.n})
		for _, v := range scc {
			for i, s := range p.succs[v] {
				if s == head {
					p.succs[v][i] = pre
				}
			}
		}
	}
}

// components returns the strongly connected components of the blocks
// that do not reach the exit (Tarjan's algorithm).
func (p *Tree) components(reaches []bool) [][]int {
	index := make([]int, p.n)
	low := make([]int, p.n)
	onStack := make([]bool, p.n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var sccs [][]int
	next := 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range p.succs[v] {
			if w >= p.n || reaches[w] {
				continue
			}
			if index[w] < 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var scc []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				scc = append(scc, w)
				if w == v {
					break
				}
			}
			sccs = append(sccs, scc)
		}
	}
	for v := range p.n {
		if !reaches[v] && index[v] < 0 {
			visit(v)
		}
	}
	return sccs
}

// build computes the immediate post-dominators, iteratively (Cooper,
// Harvey and Kennedy, "A Simple, Fast Dominance Algorithm", on the
// reversed graph).
func (p *Tree) build() {
	order := p.fromExit()
	po := make([]int, len(p.succs))
	for i, v := range order {
		po[v] = i
	}
	p.ipdom = make([]int, len(p.succs))
	for i := range p.ipdom {
		p.ipdom[i] = -1
	}
	p.ipdom[p.n] = p.n
	intersect := func(a, b int) int {
		for a != b {
			for po[a] < po[b] {
				a = p.ipdom[a]
			}
			for po[b] < po[a] {
				b = p.ipdom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for i := len(order) - 2; i >= 0; i-- { // reverse post-order, the exit (last) done
			v := order[i]
			d := -1
			for _, s := range p.succs[v] {
				switch {
				case p.ipdom[s] < 0:
				case d < 0:
					d = s
				default:
					d = intersect(s, d)
				}
			}
			if d != p.ipdom[v] {
				p.ipdom[v] = d
				changed = true
			}
		}
	}
}

// Controlled returns the blocks that the branch at the end of block b
// decides whether they run, directly or through the branches it decides.
// A block c is control dependent on b when c post-dominates a successor
// of b but does not strictly post-dominate b: the blocks on the
// post-dominator tree from each successor up to, not including, b's
// immediate post-dominator (Ferrante, Ottenstein and Warren).
func (p *Tree) Controlled(b int) []bool {
	out := make([]bool, p.n)
	queued := make([]bool, p.n)
	queued[b] = true
	work := []int{b}
	for len(work) > 0 {
		a := work[len(work)-1]
		work = work[:len(work)-1]
		stop := p.ipdom[a]
		for _, s := range p.succs[a] {
			for v := s; v != stop && v >= 0 && v != p.n; v = p.ipdom[v] {
				if v > p.n || out[v] {
					continue // a virtual node, or done
				}
				out[v] = true
				if len(p.succs[v]) > 1 && !queued[v] {
					queued[v] = true
					work = append(work, v)
				}
			}
		}
	}
	return out
}
