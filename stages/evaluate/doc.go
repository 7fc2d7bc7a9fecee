// Package evaluate is the stage that records a cell's final figures as a
// one-row Arrow table ("final", the rounds table's columns).
//
// It evaluates nothing itself: evaluation is part of training, which
// evaluates every evaluate.every rounds and always at its last round (also
// on divergence) on the parameters it holds, so the last row of train's
// rounds table is the final model's. This stage records that row under
// its own name, so tables read one row per cell.
//
// Imports: artifacts, manifests, stages.
package evaluate
