package graph

import (
	"context"
	"fmt"
	"net/mail"
	"strings"

	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/internal/ids"
	"github.com/workspacenet/facade/restclient"
)

// Mutations validate their input completely before the one upstream call
// they make; a rejected input costs no call and changes nothing. The client
// never retries POST or PUT, so a mutation runs at most once.

// validator collects the first problem found, naming the field.
type validator struct{ err error }

func (v *validator) fail(field, format string, args ...any) {
	if v.err == nil {
		v.err = gqlerr.Input(field, format, args...)
	}
}

func (v *validator) uuid(field, s string) {
	if !ids.IsUUID(s) {
		v.fail(field, "must be a uuid, got %q", truncate(s))
	}
}

func (v *validator) optUUID(field string, s *string) {
	if s != nil {
		v.uuid(field, *s)
	}
}

func (v *validator) nonEmpty(field, s string) {
	if strings.TrimSpace(s) == "" {
		v.fail(field, "must not be empty")
	}
}

func (v *validator) date(field string, t restclient.Timestamp) {
	if t.IsZero() {
		v.fail(field, "is required")
	}
}

func (v *validator) nonNegative(field string, f *float64) {
	if f != nil && *f < 0 {
		v.fail(field, "must not be negative")
	}
}

func (v *validator) email(field, s string) {
	v.nonEmpty(field, s)
	if _, err := mail.ParseAddress(s); err != nil && strings.TrimSpace(s) != "" {
		v.fail(field, "is not an email address")
	}
}

// checkID validates an id argument of a query field.
func checkID(field, id string) error {
	if !ids.IsUUID(id) {
		return gqlerr.Input(field, "must be a uuid, got %q", truncate(id))
	}
	return nil
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func createCreditNoteRequest(in model.CreateCreditNoteInput) (*restclient.CreditNoteCreateRequest, error) {
	var v validator
	v.uuid("input.invoiceRef", in.InvoiceRef)
	v.nonEmpty("input.reason", in.Reason)
	if len(in.Lines) == 0 {
		v.fail("input.lines", "must hold at least one line")
	}
	v.nonNegative("input.creditAmount", in.CreditAmount)
	v.nonNegative("input.outOfBandAmount", in.OutOfBandAmount)
	req := &restclient.CreditNoteCreateRequest{
		InvoiceRef: &in.InvoiceRef, Reason: &in.Reason, CreditAmount: in.CreditAmount,
		EffectiveDate: in.EffectiveDate, Memo: in.Memo, InternalNote: in.InternalNote, OutOfBandAmount: in.OutOfBandAmount,
	}
	for i, l := range in.Lines {
		f := fmt.Sprintf("input.lines.%d", i)
		v.uuid(f+".invoiceItemRef", l.InvoiceItemRef)
		v.nonNegative(f+".amount", l.Amount)
		if l.Quantity != nil && *l.Quantity <= 0 {
			v.fail(f+".quantity", "must be positive")
		}
		req.Lines = append(req.Lines, restclient.CreditNoteLineRequest{InvoiceItemRef: &l.InvoiceItemRef, Amount: l.Amount, Quantity: l.Quantity})
	}
	for i, r := range in.Refunds {
		f := fmt.Sprintf("input.refunds.%d", i)
		v.optUUID(f+".id", r.ID)
		v.optUUID(f+".transactionRef", r.TransactionRef)
		v.nonNegative(f+".amount", r.Amount)
		req.Refunds = append(req.Refunds, restclient.CreditNoteRefundRequest{Amount: r.Amount, ID: r.ID, TransactionRef: r.TransactionRef})
	}
	return req, v.err
}

func createBookingRequest(in model.CreateBookingInput) (*restclient.BookingCreateRequest, error) {
	var v validator
	v.uuid("input.resourceRef", in.ResourceRef)
	v.date("input.startDate", in.StartDate)
	v.date("input.endDate", in.EndDate)
	if !in.StartDate.IsZero() && !in.EndDate.IsZero() && !in.EndDate.After(in.StartDate.Time) {
		v.fail("input.endDate", "must be after startDate")
	}
	v.optUUID("input.membershipRefOwner", in.MembershipRefOwner)
	return &restclient.BookingCreateRequest{
		ResourceRef: &in.ResourceRef, StartDate: &in.StartDate, EndDate: &in.EndDate,
		Memo: in.Memo, Title: in.Title, MembershipRefOwner: in.MembershipRefOwner,
	}, v.err
}

func visitor(v *validator, field string, in *model.VisitorInput) *restclient.Visitor {
	if in == nil {
		v.fail(field, "is required")
		return nil
	}
	v.email(field+".email", in.Email)
	v.nonEmpty(field+".name", in.Name)
	return &restclient.Visitor{Email: &in.Email, Name: &in.Name, PhoneNumber: in.PhoneNumber, Surname: in.Surname}
}

func createVisitRequest(in model.CreateVisitInput) (*restclient.VisitCreateRequest, error) {
	var v validator
	v.date("input.date", in.Date)
	v.uuid("input.locationRef", in.LocationRef)
	vis := visitor(&v, "input.visitor", in.Visitor)
	return &restclient.VisitCreateRequest{Date: &in.Date, LocationRef: &in.LocationRef, Visitor: vis, Comment: in.Comment}, v.err
}

func updateVisitRequest(id string, in model.UpdateVisitInput) (*restclient.VisitUpdateRequest, error) {
	var v validator
	v.uuid("id", id)
	v.date("input.date", in.Date)
	return &restclient.VisitUpdateRequest{Date: &in.Date, Comment: in.Comment}, v.err
}

func createVisitRequestRequest(in model.CreateVisitRequestInput) (*restclient.VisitRequestCreateRequest, error) {
	var v validator
	v.uuid("input.locationRef", in.LocationRef)
	v.uuid("input.userRefHost", in.UserRefHost)
	vis := visitor(&v, "input.visitor", in.Visitor)
	return &restclient.VisitRequestCreateRequest{LocationRef: &in.LocationRef, UserRefHost: &in.UserRefHost, Visitor: vis}, v.err
}

func media(v *validator, field string, in []*model.MediaKeyInput) []restclient.MediaInput {
	if in == nil {
		return nil
	}
	out := make([]restclient.MediaInput, 0, len(in))
	for i, m := range in {
		v.nonEmpty(fmt.Sprintf("%s.%d.key", field, i), m.Key)
		out = append(out, restclient.MediaInput{Key: &m.Key})
	}
	return out
}

func og(v *validator, field string, in *model.PostOgInput) *restclient.PostOG {
	if in == nil {
		return nil
	}
	v.nonEmpty(field+".url", in.URL)
	return &restclient.PostOG{URL: &in.URL, Title: in.Title, Description: in.Description, Image: in.Image, Type: in.Type, VideoURL: in.VideoURL}
}

func createPostRequest(in model.CreatePostInput) (*restclient.PostCreateRequest, error) {
	var v validator
	v.uuid("input.locationRef", in.LocationRef)
	return &restclient.PostCreateRequest{LocationRef: &in.LocationRef, Text: in.Text, Media: media(&v, "input.media", in.Media), Og: og(&v, "input.og", in.Og)}, v.err
}

func updatePostRequest(id string, in model.UpdatePostInput) (*restclient.PostUpdateRequest, error) {
	var v validator
	v.uuid("id", id)
	return &restclient.PostUpdateRequest{Text: in.Text, Media: media(&v, "input.media", in.Media), Og: og(&v, "input.og", in.Og)}, v.err
}

// mutate runs one upstream write for a validated request.
func mutate[Req, Res any](ctx context.Context, req Req, verr error, call func(context.Context, Req) (Res, *restclient.Response, error)) (Res, error) {
	var zero Res
	if verr != nil {
		return zero, verr
	}
	res, _, err := call(ctx, req)
	if err != nil {
		return zero, err
	}
	return res, nil
}

// checkOptIDs validates two optional id arguments of which the query needs
// at least one (the resolver reports the missing pair).
func checkOptIDs(fieldA string, a *string, fieldB string, b *string) error {
	if a != nil && *a != "" {
		if err := checkID(fieldA, *a); err != nil {
			return err
		}
	}
	if b != nil && *b != "" {
		return checkID(fieldB, *b)
	}
	return nil
}
