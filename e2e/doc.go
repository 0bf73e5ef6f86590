// Package e2e holds the tests that drive the facade with real clients, as
// `go run .` starts it (stack's default configuration with the
// embedded demo upstream): the graphql-http audit of GraphQL-over-HTTP
// compliance (audit_test.go, audit.mjs), browser tests, and the facade as a
// Federation subgraph under Hive Gateway and @apollo/gateway
// (federation_test.go, federation.mjs). The clients are
// npm packages pinned in package-lock.json; `cd e2e && npm ci` installs them.
// Without node or e2e/node_modules the tests skip with that instruction,
// unless E2E_REQUIRED is set (CI sets it), when they fail instead.
package e2e
