// Package hardening_test checks, over HTTP against the REST service and the
// facade (testenv), the request-layer protections of graph.NewHandler:
// operation limits, the upstream call cap, CSRF prevention, body limits,
// batching refusal, suggestions, time bounds, APQ and trusted documents,
// the request log, and panic recovery.
package hardening_test
