package loop

// gomlxVersion is the GoMLX release gomlx_internals.go was written for:
// the private fields it reaches are that release's.
const gomlxVersion = "v0.27.3"
