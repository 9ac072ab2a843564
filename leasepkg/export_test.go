package leasepkg

// OutcomeError is outcomeError, for tests of errors the server cannot be
// made to send.
var OutcomeError = outcomeError
