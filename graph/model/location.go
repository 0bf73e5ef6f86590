package model

import "github.com/workspacenet/facade/restclient"

// Location is a location node. No REST operation fetches a location, so it is
// built from an id; Title, Address and TimezoneID are filled only where the
// upstream embeds a location summary (a visit's location). Its list fields
// (products, orders, transactions, creditNotes) are resolvers keyed by ID.
type Location struct {
	ID         string  `json:"id"`
	Title      *string `json:"title,omitempty"`
	Address    *string `json:"address,omitempty"`
	TimezoneID *string `json:"timezoneId,omitempty"`
}

// LocationFromRef returns the location node of a locationRef, or nil when
// the ref is absent or empty (the GraphQL field is then null).
func LocationFromRef(ref *string) *Location {
	if ref == nil || *ref == "" {
		return nil
	}
	return &Location{ID: *ref}
}

// LocationOfVisit returns a visit's location: the embedded summary first
// (with title, address and time zone), else the node of its locationRef.
func LocationOfVisit(v *restclient.Visit) *Location {
	if v == nil {
		return nil
	}
	if l := v.Location; l != nil && l.ID != "" {
		return &Location{ID: l.ID, Title: l.Title, Address: l.Address, TimezoneID: l.TimezoneID}
	}
	return LocationFromRef(v.LocationRef)
}

// IsEntity marks Location as a Federation entity (its @key in the schema);
// gqlgen's federation runtime asks for it. It does nothing.
func (Location) IsEntity() {}
