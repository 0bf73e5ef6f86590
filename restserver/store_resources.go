package restserver

import (
	"context"
	"database/sql"
	"time"

	"github.com/workspacenet/facade/restserver/wire"
)

// Resources and bookings.

// createBooking stores the booking of in in network, created at now, in one
// write transaction: it loads the resource (404), checks the duration (400),
// loads the owner (404), checks that the overlapping bookings leave a seat
// (409), and stores the booking and, when it costs money, its transaction.
func (s *store) createBooking(ctx context.Context, network string, now time.Time, in *bookingInput) (*wire.Booking, error) {
	var b *wire.Booking
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var res wire.Resource
		if err := getDoc(ctx, tx, "resources", network, in.resourceID, &res); err != nil {
			return notFound(err, "booking.resourceRef: resource not found")
		}
		if err := checkDuration(&res, in.minutes()); err != nil {
			return err
		}
		_, user, err := member(ctx, tx, network, in.owner)
		if err != nil {
			return notFound(err, "booking.membershipRefOwner: membership not found")
		}
		used, err := seatsUsed(ctx, tx, network, in.resourceID, in.start, in.end)
		if err != nil {
			return err
		}
		if err := checkCapacity(&res, used, in); err != nil {
			return err
		}
		var tr *wire.Transaction
		b, tr = newBooking(in, &res, user, now)
		location := deref(res.LocationRef, "")
		if err := insert(ctx, tx, record{table: "bookings", id: b.ID, network: network, createDate: now, doc: b, cols: map[string]any{
			"location_id": location, "resource_id": in.resourceID, "start_date": micros(in.start), "end_date": micros(in.end), "seats": bookingSeats,
		}}); err != nil {
			return err
		}
		if tr != nil {
			return insert(ctx, tx, record{table: "transactions", id: tr.ID, network: network, createDate: now, doc: tr, cols: map[string]any{
				"location_id": location, "status": string(*tr.Status), "type": string(*tr.Type)}})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// seatsUsed returns the seats taken by the bookings of resource in network
// that overlap [start, end).
func seatsUsed(ctx context.Context, q querier, network, resource string, start, end time.Time) (int, error) {
	var used int
	err := q.QueryRowContext(ctx, `SELECT COALESCE(SUM(seats), 0) FROM bookings
		WHERE network_id = ? AND resource_id = ? AND deleted = 0 AND start_date < ? AND end_date > ?`,
		network, resource, micros(end), micros(start)).Scan(&used)
	return used, err
}
