package graph

import "github.com/workspacenet/facade/restclient"

// This file will not be regenerated automatically.
//
// It serves as dependency injection for your app, add any dependencies you require
// here.

// Resolver is the root resolver: it holds what every field resolver needs.
type Resolver struct {
	client *restclient.Client
}
