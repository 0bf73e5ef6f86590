package graph

import (
	"context"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/workspacenet/facade/graph/gqlerr"
	"github.com/workspacenet/facade/graph/model"
	"github.com/workspacenet/facade/internal/base/ids"
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
	if f != nil && (*f < 0 || math.IsInf(*f, 0)) {
		v.fail(field, "must not be negative")
	}
}

func (v *validator) email(field, s string) {
	v.nonEmpty(field, s)
	v.maxLen(field, &s, maxEmailLen)
	if _, err := mail.ParseAddress(s); err != nil && strings.TrimSpace(s) != "" {
		v.fail(field, "is not an email address")
	}
}

// Input limits, checked before the upstream call (docs/hardening.md,
// "Mutation input limits"). Lengths are in bytes of UTF-8, as the upstream counts.
// The upstream's own limits (restserver, the local service) are copied;
// the others are our choice, where the spec and the public reference are
// silent.
const (
	maxCreditNoteLines = 100   // upstream: creditNote.lines, at most 100
	maxRefunds         = 100   // our choice
	maxNoteLen         = 2000  // upstream: creditNote.memo, booking.memo, visit.comment
	maxTitleLen        = 200   // upstream: booking.title
	maxPostTextLen     = 10000 // upstream: post.text
	maxReasonLen       = 100   // our choice (the reference's reasons are short words)
	maxNameLen         = 200   // our choice: visitor name and surname
	maxEmailLen        = 254   // RFC 5321's longest usable address
	maxPhoneLen        = 50    // our choice
	maxMedia           = 20    // our choice: files on one post
	maxMediaKeyLen     = 1024  // our choice (an object-store key)
	maxURLLen          = 2048  // our choice
	maxOgTextLen       = 2000  // our choice: og title, description and type
	// maxBookingLength is our choice: the upstream checks each resource's
	// duration.max (minutes), which the facade does not know before the call.
	maxBookingLength = 31 * 24 * time.Hour
)

func (v *validator) maxLen(field string, s *string, n int) {
	if s != nil && len(*s) > n {
		v.fail(field, "must be at most %d bytes, got %d", n, len(*s))
	}
}

func (v *validator) positive(field string, f *float64, required bool) {
	switch {
	case f == nil && required:
		v.fail(field, "is required")
	case f != nil && !(*f > 0):
		v.fail(field, "must be greater than 0")
	case f != nil && math.IsInf(*f, 0):
		v.fail(field, "must be finite")
	}
}

// httpURL checks an absolute http(s) URL: no javascript:, data: or other
// scheme reaches a client that renders the link.
func (v *validator) httpURL(field string, s *string) {
	if s == nil {
		return
	}
	v.maxLen(field, s, maxURLLen)
	u, err := url.Parse(*s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.fail(field, "must be an absolute http or https URL")
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
	v.maxLen("input.reason", &in.Reason, maxReasonLen)
	switch {
	case len(in.Lines) == 0:
		v.fail("input.lines", "must hold at least one line")
	case len(in.Lines) > maxCreditNoteLines:
		v.fail("input.lines", "must hold at most %d lines, got %d", maxCreditNoteLines, len(in.Lines))
	}
	if len(in.Refunds) > maxRefunds {
		v.fail("input.refunds", "must hold at most %d refunds, got %d", maxRefunds, len(in.Refunds))
	}
	v.nonNegative("input.creditAmount", in.CreditAmount)
	v.nonNegative("input.outOfBandAmount", in.OutOfBandAmount)
	v.maxLen("input.memo", in.Memo, maxNoteLen)
	v.maxLen("input.internalNote", in.InternalNote, maxNoteLen)
	if v.err != nil {
		return nil, v.err // before walking a list that may be huge
	}
	req := &restclient.CreditNoteCreateRequest{
		InvoiceRef: &in.InvoiceRef, Reason: &in.Reason, CreditAmount: in.CreditAmount,
		EffectiveDate: in.EffectiveDate, Memo: in.Memo, InternalNote: in.InternalNote, OutOfBandAmount: in.OutOfBandAmount,
	}
	seen := make(map[string]int, len(in.Lines))
	for i, l := range in.Lines {
		f := fmt.Sprintf("input.lines[%d]", i)
		v.uuid(f+".invoiceItemRef", l.InvoiceItemRef)
		if j, dup := seen[strings.ToLower(l.InvoiceItemRef)]; dup {
			v.fail(f+".invoiceItemRef", "the item is already credited by input.lines[%d]", j)
		}
		seen[strings.ToLower(l.InvoiceItemRef)] = i
		v.positive(f+".amount", l.Amount, false)
		v.positive(f+".quantity", l.Quantity, false)
		req.Lines = append(req.Lines, restclient.CreditNoteLineRequest{InvoiceItemRef: &l.InvoiceItemRef, Amount: l.Amount, Quantity: l.Quantity})
	}
	for i, r := range in.Refunds {
		f := fmt.Sprintf("input.refunds[%d]", i)
		v.positive(f+".amount", r.Amount, true)
		v.optUUID(f+".id", r.ID)
		if r.TransactionRef == nil {
			v.fail(f+".transactionRef", "is required")
		}
		v.optUUID(f+".transactionRef", r.TransactionRef)
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
	} else if in.EndDate.Sub(in.StartDate.Time) > maxBookingLength {
		v.fail("input.endDate", "a booking lasts at most %d days", int(maxBookingLength/(24*time.Hour)))
	}
	v.optUUID("input.membershipRefOwner", in.MembershipRefOwner)
	v.maxLen("input.memo", in.Memo, maxNoteLen)
	v.maxLen("input.title", in.Title, maxTitleLen)
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
	v.maxLen(field+".name", &in.Name, maxNameLen)
	v.maxLen(field+".surname", in.Surname, maxNameLen)
	v.maxLen(field+".phoneNumber", in.PhoneNumber, maxPhoneLen)
	return &restclient.Visitor{Email: &in.Email, Name: &in.Name, PhoneNumber: in.PhoneNumber, Surname: in.Surname}
}

func createVisitRequest(in model.CreateVisitInput) (*restclient.VisitCreateRequest, error) {
	var v validator
	v.date("input.date", in.Date)
	v.uuid("input.locationRef", in.LocationRef)
	vis := visitor(&v, "input.visitor", in.Visitor)
	v.maxLen("input.comment", in.Comment, maxNoteLen)
	return &restclient.VisitCreateRequest{Date: &in.Date, LocationRef: &in.LocationRef, Visitor: vis, Comment: in.Comment}, v.err
}

func updateVisitRequest(id string, in model.UpdateVisitInput) (*restclient.VisitUpdateRequest, error) {
	var v validator
	v.uuid("id", id)
	v.date("input.date", in.Date)
	v.maxLen("input.comment", in.Comment, maxNoteLen)
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
	if len(in) > maxMedia {
		v.fail(field, "must hold at most %d files, got %d", maxMedia, len(in))
		return nil
	}
	out := make([]restclient.MediaInput, 0, len(in))
	for i, m := range in {
		f := fmt.Sprintf("%s[%d].key", field, i)
		v.nonEmpty(f, m.Key)
		v.maxLen(f, &m.Key, maxMediaKeyLen)
		out = append(out, restclient.MediaInput{Key: &m.Key})
	}
	return out
}

func og(v *validator, field string, in *model.PostOgInput) *restclient.PostOG {
	if in == nil {
		return nil
	}
	v.nonEmpty(field+".url", in.URL)
	v.httpURL(field+".url", &in.URL)
	v.httpURL(field+".image", in.Image)
	v.httpURL(field+".videoUrl", in.VideoURL)
	v.maxLen(field+".title", in.Title, maxOgTextLen)
	v.maxLen(field+".description", in.Description, maxOgTextLen)
	v.maxLen(field+".type", in.Type, maxOgTextLen)
	return &restclient.PostOG{URL: &in.URL, Title: in.Title, Description: in.Description, Image: in.Image, Type: in.Type, VideoURL: in.VideoURL}
}

func createPostRequest(in model.CreatePostInput) (*restclient.PostCreateRequest, error) {
	var v validator
	v.uuid("input.locationRef", in.LocationRef)
	v.maxLen("input.text", in.Text, maxPostTextLen)
	if (in.Text == nil || strings.TrimSpace(*in.Text) == "") && len(in.Media) == 0 {
		v.fail("input.text", "a post needs text or media")
	}
	return &restclient.PostCreateRequest{LocationRef: &in.LocationRef, Text: in.Text, Media: media(&v, "input.media", in.Media), Og: og(&v, "input.og", in.Og)}, v.err
}

func updatePostRequest(id string, in model.UpdatePostInput) (*restclient.PostUpdateRequest, error) {
	var v validator
	v.uuid("id", id)
	v.maxLen("input.text", in.Text, maxPostTextLen)
	return &restclient.PostUpdateRequest{Text: in.Text, Media: media(&v, "input.media", in.Media), Og: og(&v, "input.og", in.Og)}, v.err
}

// mutate runs one upstream write for a validated request.
func mutate[Req, Res any](ctx context.Context, r *Resolver, op restclient.Row, id string, req Req, verr error, call func(context.Context, Req) (Res, *restclient.Response, error)) (Res, error) {
	var zero Res
	if verr != nil {
		return zero, verr
	}
	res, _, err := call(restclient.WithPriority(ctx, callPriority(ctx)), req)
	if err != nil {
		return zero, err
	}
	r.wrote(ctx, op, id, res)
	return res, nil
}

// wrote makes the caller's live sources that the write op (answered 2xx
// with answer; id in its path parameter, if it has one) made stale poll at
// once (live.Hub.Poke): the caller's subscriptions see its own change at
// once, other clients' at their next poll.
func (r *Resolver) wrote(ctx context.Context, op restclient.Row, id string, answer any) {
	if r.live == nil {
		return
	}
	o := op.Row()
	r.live.Poke(restclient.IdentityFromContext(ctx), restclient.StaleAfter(o.Method, o.Route, id, answer))
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
