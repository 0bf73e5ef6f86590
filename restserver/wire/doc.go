// Package wire holds the local REST service's own types for the objects and
// request bodies of the Workspace Network Service API
// (../shared/spec/workspace-network-api.md), as the service stores, writes
// and reads them. They are the service's, not the facade client's
// (restclient): the service is the double that must catch the client's
// mistakes, so it shares none of its types. restserver/openapi's tests check
// these types and restclient's against the service's OpenAPI document.
package wire
