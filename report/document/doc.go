// Package document writes `ump report`'s reproduction report: report.md
// with a section per manifest (its table, beside the paper's where the
// paper publishes one, its figures drawn in PNG and PDF, the commands
// that run and check it, and who vouches for its results), each
// manifest's results directory published beside it (resultsdir.Publish,
// so that a report regenerated in place and killed leaves each old or
// new), and the root index over them; and decides the claims
// REPRODUCING.md makes on a results directory (Decide, Claims).
//
// Imports: eventlog, figure, internal/display, manifests, published, render,
// report, report/paper, report/resultsdir, signing, state.
package document
