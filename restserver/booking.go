package restserver

import (
	"math"
	"time"

	"github.com/workspacenet/facade/restserver/wire"
)

// Booking rules (docs/local-rest-service.md, "Amount rules"): a booking takes one seat;
// bookings of a resource may overlap up to its capacity (missing or < 1
// counts as 1); its duration must fit the resource's minimum, maximum and
// step; money pricing records a transaction.
const (
	bookingSeats = 1
	taxRate      = 20.0 // percent, prices include it
)

// bookingInput is a validated POST /resources/bookings/v1 body.
type bookingInput struct {
	resourceID string    // lowercased
	start, end time.Time // UTC, end after start
	owner      string    // membership id: membershipRefOwner or the caller's
	title      *string
	memo       *string
}

// minutes is the booking's duration in minutes.
func (in *bookingInput) minutes() float64 { return in.end.Sub(in.start).Minutes() }

// validateBooking checks req; the caller's membership owns the booking
// unless req names another. Every error is a 400 naming the field.
func validateBooking(req *wire.BookingCreateRequest, callerMembership string) (*bookingInput, error) {
	resourceID, err := refParam(req.ResourceRef, "booking.resourceRef")
	if err != nil {
		return nil, err
	}
	if req.StartDate == nil || req.StartDate.IsZero() {
		return nil, invalidf("booking.startDate: is required")
	}
	if req.EndDate == nil || req.EndDate.IsZero() {
		return nil, invalidf("booking.endDate: is required")
	}
	in := &bookingInput{resourceID: resourceID, start: req.StartDate.UTC(), end: req.EndDate.UTC(), owner: callerMembership,
		title: req.Title, memo: req.Memo}
	if !in.end.After(in.start) {
		return nil, invalidf("booking.endDate: must be after booking.startDate")
	}
	if req.MembershipRefOwner != nil {
		if in.owner, err = refParam(req.MembershipRefOwner, "booking.membershipRefOwner"); err != nil {
			return nil, err
		}
	}
	if err := maxLen(req.Title, 200, "booking.title"); err != nil {
		return nil, err
	}
	if err := maxLen(req.Memo, 2000, "booking.memo"); err != nil {
		return nil, err
	}
	return in, nil
}

// checkDuration checks a booking of minutes against the resource's
// duration limits and step (400s).
func checkDuration(res *wire.Resource, minutes float64) error {
	if d := res.Duration; d != nil {
		if d.Min != nil && *d.Min > 0 && minutes < *d.Min {
			return invalidf("booking.endDate: the booking must last at least %g minutes", *d.Min)
		}
		if d.Max != nil && *d.Max > 0 && minutes > *d.Max {
			return invalidf("booking.endDate: the booking must last at most %g minutes", *d.Max)
		}
	}
	if st := deref(res.BookingStepMinutes, 0); st > 0 && math.Mod(minutes, st) != 0 {
		return invalidf("booking.endDate: the duration must be a multiple of %g minutes", st)
	}
	return nil
}

// checkCapacity checks that a new booking fits next to the used seats of
// the overlapping bookings of res (409).
func checkCapacity(res *wire.Resource, used int, in *bookingInput) error {
	capacity := int(deref(res.Capacity, 1))
	if capacity < 1 {
		capacity = 1
	}
	if used+bookingSeats > capacity {
		return conflictf("booking: the resource is fully booked between %s and %s (capacity %d)",
			in.start.Format("2006-01-02T15:04:05Z07:00"), in.end.Format("2006-01-02T15:04:05Z07:00"), capacity)
	}
	return nil
}

// newBooking builds the booking of in on res for the owner user, created at
// now, with its payment: by money (then tr is the money transaction to
// record), by credits, or free.
func newBooking(in *bookingInput, res *wire.Resource, user *wire.User, now time.Time) (b *wire.Booking, tr *wire.Transaction) {
	title := in.title
	if title == nil {
		title = res.Title
	}
	b = &wire.Booking{
		ID: newID(), ResourceRef: new(in.resourceID), StartDate: wire.NewTimestamp(in.start), EndDate: wire.NewTimestamp(in.end),
		Title: title, Memo: in.memo, MembershipRefOwner: new(in.owner), UserOwner: user, Seats: new(float64(bookingSeats)),
		Attendees:  []wire.BookingAttendee{{MembershipRef: new(in.owner), User: user}},
		CreateDate: wire.NewTimestamp(now), UpdateDate: wire.NewTimestamp(now),
	}
	hours := in.minutes() / 60
	switch {
	case res.Money != nil && deref(res.Money.Enabled, false) && deref(res.Money.Price, 0) > 0:
		amount := round2(*res.Money.Price * hours)
		net := round2(amount / (1 + taxRate/100))
		tr = &wire.Transaction{
			ID: newID(), Amount: new(amount), CreateDate: wire.NewTimestamp(now), CurrencyCode: new("EUR"),
			LocationRef: res.LocationRef, MembershipRef: new(in.owner), Status: new(wire.TransactionStatusSucceeded),
			Type: new(wire.TransactionTypeBooking), PaymentMethod: &wire.PaymentMethod{Label: new("External"), Type: new("external")},
			Booking: &wire.TransactionBooking{ID: b.ID, Resource: &wire.Resource{ID: res.ID, Title: res.Title},
				Price: &wire.PriceSplit{NetAmount: new(net), TaxAmount: new(round2(amount - net))}},
			User: user,
		}
		b.Payment = &wire.ItemPayment{Amount: new(amount), CurrencyCode: new("EUR"), Status: new("succeeded"), Type: new("external"),
			Tax: &wire.ItemPaymentTax{Inclusive: new(true), Rate: new(taxRate)}, TransactionRef: new(tr.ID)}
	case res.Credits != nil && deref(res.Credits.Enabled, false) && deref(res.Credits.Price, 0) > 0:
		b.Payment = &wire.ItemPayment{Amount: new(round2(*res.Credits.Price * hours)), Status: new("succeeded"), Type: new("credits")}
	}
	return b, tr
}
