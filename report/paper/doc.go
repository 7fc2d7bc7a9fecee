// Package paper sets a results table (report.Grid) beside the paper's
// published one (manifests/published.yaml, read by package published) and
// decides the paper's claims on both (ComparePaper): each claim holds,
// fails, is not decided at the confidence asked for, cannot be decided
// (a row diverged wherever it ran) or is not run, and says where it rests
// on a choice within the noise (its runner-up) or on divergence
// (docs/tables.md). MoreSeeds names the cells `ump run --until-decided`
// adds where a choice or a claim is within the noise.
//
// Imports: artifacts, figure, internal/display, manifests, published, report,
// stats.
package paper
