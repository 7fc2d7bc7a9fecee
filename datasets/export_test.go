package datasets

// Remove takes a data set out of the catalogue, and WriteIDX writes an
// IDX file, for the external tests (guide_test.go).
var (
	Remove   = remove
	WriteIDX = writeIDX
)
