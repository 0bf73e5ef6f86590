package graph

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/internal/base/ids"
	"github.com/workspacenet/facade/restclient"
)

// FuzzMutationInputs feeds arbitrary values to every mutation's input
// validation and conversion. None panics; a refusal is an *gqlerr.InputError
// naming an input field, with a valid UTF-8 message; an accepted input is
// converted faithfully (ids are uuids, the booking ends after it starts).
func FuzzMutationInputs(f *testing.F) {
	const id = "f302cbe6-4927-49a2-baca-cbeb3a5f0274"
	f.Add(id, "ada@example.com", "Ada", "key.png", "https://x.example", int64(1_780_000_000), int64(3600), 1.5, 2.0)
	f.Add("", "", "", "", "", int64(0), int64(0), 0.0, 0.0)
	f.Add("not-a-uuid-but-longer-than-forty-characters-ééééé", "no at sign", " ", " ", " ", int64(-1), int64(-7200), -1.0, -0.0)
	f.Add(strings.Repeat("é", 30), "a@b", "\x00", "\xff", "\xff", int64(253402300799), int64(1), 1e308, 5e-324)
	f.Fuzz(func(t *testing.T, ref, email, name, key, url string, start, dur int64, amount, qty float64) {
		at := func(s int64) restclient.Timestamp {
			if s <= 0 {
				return restclient.Timestamp{}
			}
			return restclient.Timestamp{Time: time.Unix(s%253402300799, 0).UTC()}
		}
		startTS, endTS := at(start), at(start+dur)
		visitor := &model.VisitorInput{Email: email, Name: name}
		check := func(op string, err error, fields ...string) {
			t.Helper()
			if err == nil {
				return
			}
			var ie *gqlerr.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("%s: %T %v, want *gqlerr.InputError", op, err, err)
			}
			if !strings.HasPrefix(ie.Field, "input.") && ie.Field != "id" {
				t.Fatalf("%s: field %q", op, ie.Field)
			}
			if !utf8.ValidString(ie.Message) || !utf8.ValidString(ie.Error()) {
				t.Fatalf("%s: message is not valid UTF-8: %q", op, ie.Message)
			}
		}

		b, err := createBookingRequest(model.CreateBookingInput{ResourceRef: ref, StartDate: startTS, EndDate: endTS, MembershipRefOwner: &ref})
		check("createBooking", err)
		if err == nil {
			if !ids.IsUUID(*b.ResourceRef) || *b.ResourceRef != ref || !b.EndDate.After(b.StartDate.Time) || b.StartDate.IsZero() {
				t.Fatalf("createBooking accepted %q %v..%v", ref, startTS, endTS)
			}
		}

		cn, err := createCreditNoteRequest(model.CreateCreditNoteInput{
			InvoiceRef: ref, Reason: name, CreditAmount: &amount,
			Lines:   []*model.CreditNoteLineInput{{InvoiceItemRef: ref, Amount: &amount, Quantity: &qty}},
			Refunds: []*model.CreditNoteRefundInput{{Amount: &amount, TransactionRef: &ref}},
		})
		check("createCreditNote", err)
		if err == nil {
			if !ids.IsUUID(*cn.InvoiceRef) || strings.TrimSpace(*cn.Reason) == "" || amount < 0 || qty <= 0 || len(cn.Lines) != 1 || len(cn.Refunds) != 1 {
				t.Fatalf("createCreditNote accepted %q reason %q amount %v qty %v", ref, name, amount, qty)
			}
		}

		v, err := createVisitRequest(model.CreateVisitInput{Date: startTS, LocationRef: ref, Visitor: visitor})
		check("createVisit", err)
		if err == nil && (*v.Visitor.Email != email || strings.TrimSpace(name) == "" || v.Date.IsZero()) {
			t.Fatalf("createVisit accepted %q %q", email, name)
		}
		_, err = createVisitRequest(model.CreateVisitInput{Date: startTS, LocationRef: ref})
		if err == nil {
			t.Fatal("createVisit accepted a missing visitor")
		}
		check("createVisit", err)
		_, err = updateVisitRequest(ref, model.UpdateVisitInput{Date: endTS})
		check("updateVisit", err)
		_, err = createVisitRequestRequest(model.CreateVisitRequestInput{LocationRef: ref, UserRefHost: ref, Visitor: visitor})
		check("createVisitRequest", err)

		media := []*model.MediaKeyInput{{Key: key}}
		og := &model.PostOgInput{URL: url}
		p, err := createPostRequest(model.CreatePostInput{LocationRef: ref, Text: &name, Media: media, Og: og})
		check("createPost", err)
		if err == nil && (len(p.Media) != 1 || *p.Media[0].Key != key || strings.TrimSpace(key) == "" || *p.Og.URL != url) {
			t.Fatalf("createPost converted %q %q into %+v", key, url, p)
		}
		_, err = updatePostRequest(ref, model.UpdatePostInput{Text: &name, Media: media, Og: og})
		check("updatePost", err)
	})
}
