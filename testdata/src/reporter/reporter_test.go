package reporter

// A test file is out of the probe's scope: nothing is reported here.
func helper() { _ = find() }
