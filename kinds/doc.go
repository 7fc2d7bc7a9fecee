// Package kinds is how ump declares the parameterised kinds a manifest
// names — algorithms, codecs, topologies, partitions — each exactly once:
// its name and doc, its parameters (type, default, range, doc), the cell
// fields beyond its parameters that its results depend on (they enter its
// stage's cache key), the rules no single parameter shows, and its
// constructor.
//
// The package that implements a family declares it next to the code
// (graphs.Topologies, split.Partitions), or, where reading a manifest must
// not link the implementation, in a package of declarations that the
// implementation binds its constructors to by name (codecs.Family, bound
// by compress.Codecs, and optimizers.Family, bound by algorithms.Family,
// with Bind). From the declarations manifests decodes, fills and
// validates the blocks (and explains them in errors), export builds its
// parameter columns and a test checks the tables of docs/manifests.md. Adding a
// parameter is one Param in one Kind, and reading it where it is used
// (Values.Float("name")).
//
// Imports: none of ump's packages.
package kinds
