package leasepkg

// OutcomeError is outcomeError, for tests of errors the server cannot be
// made to send.
var OutcomeError = outcomeError

// RenewManySQL and RenewTermSQL are the batched and the lone per-term
// renewal, for tests that count the statements sent.
const (
	RenewManySQL = renewManySQL
	RenewTermSQL = renewTermSQL
)
