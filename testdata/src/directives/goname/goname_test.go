package goname

// A test file of the package, which sorts first: the finding stays at the
// package clause of the package's own file.
