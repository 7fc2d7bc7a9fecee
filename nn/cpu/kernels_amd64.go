//go:build !cgo

package cpu

import xcpu "golang.org/x/sys/cpu"

//go:generate go run ./asmgen

// Without cgo on amd64 the kernels are Go assembly (kernels_amd64.s and
// their declarations, kernels_asm_amd64.go, written by asmgen): "avx512" (16 floats a vector) and "avx2" (AVX2 with
// FMA, 8), the CPU's widest unless UMP_KERNELS chose one, and "go" (the Go
// loops). Each assembly kernel computes what a Go loop says, in its
// order, so every path gives the same bits:
//   - gemmTile: a tile of gemm (gemm.go), 2 vectors of columns and up to
//     8 (AVX-512) or 6 (AVX2) rows, one fused multiply-add a product;
//   - planeRow: an output row of planeForwardGo (conv_plane.go) for 1 to
//     8 output channels, a vector of columns at a time;
//   - lanesRow: an output row of a lanes convolution (conv_lanes.go), a
//     vector of output channels at a time, 8 or 10 columns a block;
//   - lanesGrad and planeGrad: the weight gradients' running sums of
//     lanesWeightGradGo and planeWeightGradGo (the biases' sums are the Go
//     loops'), for filters of 3 and 5 taps a row (others run the Go loops).
// Products and sums of the convolutions are rounded apart, as in Go.
// Pooling and ReLU run the Go loops.

// asmPaths are the assembly kernels' paths and their vector widths.
var asmPaths = map[string]int{"avx512": 16, "avx2": 8}

// width is the vector width in use: 16, 8, or 0 (the go path).
var width int

func runs(path string) bool {
	switch path {
	case "avx512":
		return xcpu.X86.HasAVX512F
	case "avx2":
		return xcpu.X86.HasAVX2 && xcpu.X86.HasFMA
	}
	return path == "go"
}

func source(path string) string {
	if path == "go" {
		return "Go loops"
	}
	return "Go assembly"
}

func use(path string) {
	kernels = path
	width = asmPaths[path]
}

// maxStack bounds the floats of a kernel's buffer on the stack; beyond
// it the Go loops run.
const maxStack = 4096

// gemmKC: the products of k a packed block of B holds.
const gemmKC = 256

func gemm(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta bool, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || width == 0 {
		gemmGo(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
		return
	}
	var packed [gemmKC * 32]float32
	var tmp [8 * 32]float32
	nrw, mr := 2*width, 8
	if width == 8 {
		mr = 6
	}
	for j0 := 0; j0 < n; j0 += nrw {
		nc := min(nrw, n-j0)
		for l0 := 0; l0 < k; l0 += gemmKC {
			kc, zero := min(gemmKC, k-l0), l0 == 0 && !beta
			p := packed[:kc*nrw]
			gemmPack(tb, b, ldb, l0, kc, j0, nc, p, nrw)
			for i0 := 0; i0 < m; i0 += mr {
				rows := min(mr, m-i0)
				var a0 *float32 // A(i0, l0); A(i0+r, l0+l) rs*r + ls*l bytes on
				rs, ls := 4*lda, 4
				if ta {
					a0, rs, ls = &a[l0*lda+i0], 4, 4*lda
				} else {
					a0 = &a[i0*lda+l0]
				}
				if nc == nrw {
					gemmTile(rows, kc, a0, rs, ls, &p[0], &c[i0*ldc+j0], 4*ldc, zero)
					continue
				}
				// a partial panel: through tmp
				for r := 0; r < rows; r++ {
					t := tmp[r*nrw:][:nrw]
					clear(t)
					if !zero {
						copy(t, c[(i0+r)*ldc+j0:][:nc])
					}
				}
				gemmTile(rows, kc, a0, rs, ls, &p[0], &tmp[0], 4*nrw, zero)
				for r := 0; r < rows; r++ {
					copy(c[(i0+r)*ldc+j0:][:nc], tmp[r*nrw:][:nc])
				}
			}
		}
	}
}

// gemmPack copies B's rows l0..l0+kc-1, columns j0..j0+nc-1 of op(B)
// into p, row l at p[l*nrw:], the columns past nc 0.
func gemmPack(tb bool, b []float32, ldb, l0, kc, j0, nc int, p []float32, nrw int) {
	for l := 0; l < kc; l++ {
		row := p[l*nrw:][:nrw]
		if tb {
			for jj := range nc {
				row[jj] = b[(j0+jj)*ldb+l0+l]
			}
		} else {
			copy(row, b[(l0+l)*ldb+j0:][:nc])
		}
		clear(row[nc:])
	}
}

func planeForward(planes, w, bias, y []float32, chans, batch, oh, ow, pw, outC, zr, vr, k int) {
	taps := chans * k * k
	ob := 8
	if outC == 6 {
		ob = 6
	}
	if width == 0 || taps*ob > maxStack {
		planeForwardGo(planes, w, bias, y, chans, batch, oh, ow, pw, outC, zr, vr, k)
		return
	}
	ph := oh + k - 1
	var wb [maxStack]float32 // the block's filters, tap-major
	for o0 := 0; o0 < outC; o0 += ob {
		no := min(ob, outC-o0)
		for o := range no {
			for t := range taps {
				wb[t*no+o] = w[(o0+o)*taps+t]
			}
		}
		for s := 0; s < batch; s++ {
			for r := 0; r < oh; r++ {
				klo, khi := max(0, zr-r), min(k, zr+vr-r)
				yr := ((o0*batch+s)*oh + r) * ow
				if klo >= khi {
					for o := range no {
						fill(y[yr+o*batch*oh*ow:][:ow], bias[o0+o])
					}
					continue
				}
				planeRow(no, &planes[(s*ph+r+klo)*pw], &wb[klo*k*no], &bias[o0], &y[yr], ow/width, ow%width,
					chans, 4*batch*ph*pw, khi-klo, k, 4*pw, 4*(k-(khi-klo))*k*no, 4*batch*oh*ow)
			}
		}
	}
}

func lanesForward(xp, w, bias, wt, y []float32, chans, batch, oh, ow, ph, pw, outC, k, cb int) {
	nblk := (ow + cb - 1) / cb
	if width == 0 || nblk*cb*width > maxStack {
		planeForwardGo(xp, w, bias, y, chans, batch, oh, ow, pw, outC, 0, ph, k)
		return
	}
	channelsLast(w, wt, outC, chans*k*k)
	var out [maxStack]float32 // a row's columns, width output channels each
	for s := 0; s < batch; s++ {
		for r := 0; r < oh; r++ {
			for ob := 0; ob < outC/width; ob++ {
				lanesRow(
					cb,
					&xp[(s*ph+r)*pw],
					&wt[ob*width],
					&bias[ob*width],
					&out[0],
					nblk,
					chans,
					4*batch*ph*pw,
					k,
					4*pw,
					4*outC,
				)
				for o := range width {
					yr := y[(((ob*width+o)*batch+s)*oh+r)*ow:][:ow]
					for c := range yr {
						yr[c] = out[c*width+o]
					}
				}
			}
		}
	}
}

func lanesWeightGrad(xp, dyt, gw, gb, scratch []float32, chans, batch, oh, ow, ph, pw, outC, k int) {
	if width == 0 || k != 3 && k != 5 {
		lanesWeightGradGo(xp, dyt, gw, gb, scratch, chans, batch, oh, ow, ph, pw, outC, k)
		return
	}
	lanesBiasGrad(dyt, gb, batch*oh*ow, outC)
	kk, rows := k*k, k
	if width == 8 {
		rows = 1
	}
	sums := scratch[:outC*chans*kk]
	clear(sums)
	for ob := 0; ob < outC/width; ob++ {
		for s0 := 0; s0 < batch; s0 += group {
			ns := min(group, batch-s0)
			for ic := 0; ic < chans; ic++ {
				for k0 := 0; k0 < k; k0 += rows {
					lanesGrad(
						k,
						&xp[((ic*batch+s0)*ph+k0)*pw],
						&dyt[s0*oh*ow*outC+ob*width],
						&sums[((ob*chans+ic)*kk+k0*k)*width],
						ns,
						oh,
						ow,
						4*ph*pw,
						4*pw,
						4*outC,
					)
				}
			}
		}
		for o := range width {
			for ic := 0; ic < chans; ic++ {
				for t := 0; t < kk; t++ {
					gw[((ob*width+o)*chans+ic)*kk+t] = sums[((ob*chans+ic)*kk+t)*width+o]
				}
			}
		}
	}
}

// group: the weight gradients' samples a block (their planes and dy stay
// in cache).
const group = 8

func planeWeightGrad(planes, dy, gw, gb, scratch []float32, chans, batch, oh, ow, pw, outC, k int) {
	if width == 0 || k != 3 && k != 5 {
		planeWeightGradGo(planes, dy, gw, gb, chans, batch, oh, ow, pw, outC, k)
		return
	}
	ph, taps := oh+k-1, chans*k*k
	sums := scratch[:lanes*outC*taps]
	clear(sums)
	ob := 4
	if width == 8 {
		ob = 2
	}
	for s0 := 0; s0 < batch; s0 += group {
		ns := min(group, batch-s0)
		for ic := 0; ic < chans; ic++ {
			for ki := 0; ki < k; ki++ {
				for o0 := 0; o0 < outC; o0 += ob {
					nb := min(ob, outC-o0)
					for v := 0; v < lanes/width; v++ {
						// the columns v*width + 16j: nfull whole vectors, then tail
						nfull, tail := 0, 0
						for c0 := v * width; c0 < ow; c0 += lanes {
							if n := ow - c0; n >= width {
								nfull++
							} else {
								tail = n
							}
						}
						if nfull == 0 && tail == 0 {
							continue
						}
						planeGrad(k, nb, &planes[((ic*batch+s0)*ph+ki)*pw+v*width], &dy[(o0*batch+s0)*oh*ow+v*width],
							&sums[(o0*taps+(ic*k+ki)*k)*lanes+v*width], ns, oh, nfull, tail,
							4*ph*pw, 4*pw, 4*oh*ow, 4*ow, 4*batch*oh*ow, 4*taps*lanes)
					}
				}
			}
		}
	}
	for o := 0; o < outC; o++ {
		for t := 0; t < taps; t++ {
			gw[o*taps+t] = laneTotal(sums[(o*taps+t)*lanes:][:lanes])
		}
	}
	planeBiasGrad(dy, gb, batch, oh, ow, outC)
}

// sampleInputGrad has no assembly: inputGradient's padded path (by
// planeForward) is the same sum.
func sampleInputGrad(_, _, _, _ []float32, _, _, _, _, _, _, _, _, _ int) bool { return false }

func poolForward(x, y []float32, at []int32, planes, h, w int, train bool) {
	poolForwardGo(x, y, at, planes, h, w, train)
}

func reluForward(x, y []float32) { reluForwardGo(x, y) }
