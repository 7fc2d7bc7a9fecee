// Package optimizers declares what reading a manifest or a store needs of
// the algorithms, without their update rules: every algorithm a manifest's
// algorithm block may name — D-SUM, GT-DSUM and the baselines — with its
// parameters (the paper's defaults, ranges, docs) and its own checks
// (Family). Package algorithms binds each declaration to its definition
// by name (kinds.Bind), as package compress does with package codecs.
//
// Imports: kinds.
package optimizers
