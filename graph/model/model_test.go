package model

import (
	"testing"

	"github.com/workspacenet/facade/restclient"
)

func TestLocationFromRef(t *testing.T) {
	if LocationFromRef(nil) != nil || LocationFromRef(new("")) != nil {
		t.Error("absent or empty ref must give no location")
	}
	if l := LocationFromRef(new("loc-1")); l == nil || l.ID != "loc-1" || l.Title != nil {
		t.Errorf("LocationFromRef = %+v", l)
	}
}

func TestLocationOfVisit(t *testing.T) {
	embedded := &restclient.Visit{
		LocationRef: new("loc-1"),
		Location:    &restclient.VisitLocation{ID: "loc-1", Title: new("HQ"), Address: new("1 Main St"), TimezoneID: new("Europe/Paris")},
	}
	l := LocationOfVisit(embedded)
	if l == nil || l.ID != "loc-1" || *l.Title != "HQ" || *l.Address != "1 Main St" || *l.TimezoneID != "Europe/Paris" {
		t.Errorf("embedded summary not used: %+v", l)
	}
	if l := LocationOfVisit(&restclient.Visit{LocationRef: new("loc-2")}); l == nil || l.ID != "loc-2" || l.Title != nil {
		t.Errorf("ref fallback = %+v", l)
	}
	if LocationOfVisit(&restclient.Visit{}) != nil || LocationOfVisit(nil) != nil {
		t.Error("a visit without location must give none")
	}
}

func TestOrderWrappers(t *testing.T) {
	tx := &restclient.Transaction{LocationRef: new("loc-1"), Order: &restclient.TransactionOrder{ID: "o-1"}}
	if o := TransactionOrderOf(tx); o == nil || o.ID != "o-1" || *o.LocationRef != "loc-1" {
		t.Errorf("TransactionOrderOf = %+v", o)
	}
	if TransactionOrderOf(&restclient.Transaction{}) != nil || TransactionOrderOf(nil) != nil {
		t.Error("no order must give nil")
	}
	it := &restclient.InvoiceItem{LocationRef: new("loc-2"), Order: &restclient.InvoiceItemOrder{Quantity: new(2.0)}}
	if o := InvoiceItemOrderOf(it); o == nil || *o.Quantity != 2 || *o.LocationRef != "loc-2" {
		t.Errorf("InvoiceItemOrderOf = %+v", o)
	}
	if InvoiceItemOrderOf(&restclient.InvoiceItem{}) != nil {
		t.Error("no order must give nil")
	}
	if o := TransactionOrderOptionOf(&restclient.OptionNameSummary{ID: "opt", Name: new("Large")}); o == nil || o.ID != "opt" || *o.Name != "Large" || *o.Title != "Large" {
		t.Errorf("TransactionOrderOptionOf = %+v", o)
	}
	if TransactionOrderOptionOf(&restclient.OptionNameSummary{}) != nil || TransactionOrderOptionOf(nil) != nil {
		t.Error("no option id must give nil")
	}
}
