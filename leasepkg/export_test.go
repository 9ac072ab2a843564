package leasepkg

// OutcomeError is outcomeError, for tests of errors the server cannot be
// made to send.
var OutcomeError = outcomeError

// RenewManySQL and RenewTermSQL are the batched and the lone per-term
// renewal, and LeadersSQL a Client's reading of the leases its campaigns
// wait for, for tests that count the statements sent.
const (
	RenewManySQL = renewManySQL
	RenewTermSQL = renewTermSQL
	LeadersSQL   = leadersSQL
)
