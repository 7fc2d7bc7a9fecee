// Package codecs declares what reading a manifest or a store needs of
// compression, without the codecs themselves: every codec a manifest may
// name (GRACE's names) with its parameters (Family), and the columns the
// exchange adds to a rounds table (Columns). Package compress implements
// the codecs and binds each constructor to its declaration by name
// (kinds.Bind).
//
// Imports: kinds.
package codecs
