package restserver

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/workspacenet/facade/restserver/wire"
)

// Demo data is generated from a fixed seed and a fixed base date, so ids and
// content are identical on every machine. The credentials are well-known.
const (
	demoSeed1, demoSeed2 = 20260105, 42

	DemoClientID          = "demo-client"
	DemoClientSecret      = "demo-client-secret"
	DemoBearerToken       = "demo-all-scopes-token"
	DemoReadonlyToken     = "demo-readonly-token"
	OtherDemoClientID     = "other-client"
	OtherDemoClientSecret = "other-client-secret"
	OtherDemoBearerToken  = "other-all-scopes-token"
	OtherDemoReadonly     = "other-readonly-token"
)

// demoBase is the fixed "now" of the demo data: records are dated before it
// (and some bookings and events after it).
var demoBase = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// seedDemo generates the demo networks when the database holds none.
func (s *Server) seedDemo(ctx context.Context, scale int) error {
	return s.db.tx(ctx, func(tx *sql.Tx) error {
		n, err := countNetworks(ctx, tx)
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		r := rand.New(rand.NewPCG(demoSeed1, demoSeed2))
		nets := []demoNetworkCreds{}
		for i, spec := range []struct {
			name, client, secret, bearer, readonly string
			cities                                 []string
		}{
			{"Demo Workspace Network", DemoClientID, DemoClientSecret, DemoBearerToken, DemoReadonlyToken, []string{"Amsterdam", "Berlin", "Lisbon"}},
			{"Other Workspace Network", OtherDemoClientID, OtherDemoClientSecret, OtherDemoBearerToken, OtherDemoReadonly, []string{"Oslo"}},
		} {
			g := &gen{ctx: ctx, tx: tx, r: r, x: rand.New(rand.NewPCG(demoSeed1, demoSeed2+1+uint64(i))), scale: scale}
			g.network = g.uuid()
			if err := g.network1(spec.name, spec.cities, i == 0); err != nil {
				return err
			}
			if err := putClient(ctx, tx, spec.client, spec.secret, g.network, g.owner, AllScopes(), demoBase); err != nil {
				return err
			}
			if err := putToken(ctx, tx, spec.bearer, "access", g.network, spec.client, g.owner, AllScopes(), demoBase, true); err != nil {
				return err
			}
			if err := putToken(ctx, tx, spec.readonly, "access", g.network, spec.client, g.owner, ReadonlyScopes(), demoBase, true); err != nil {
				return err
			}
			nets = append(nets, demoNetworkCreds{NetworkID: g.network, ClientID: spec.client, ClientSecret: spec.secret, Bearer: spec.bearer, Readonly: spec.readonly})
		}
		return putDemoNetworks(ctx, tx, nets)
	})
}

// gen generates one demo network inside a transaction.
type gen struct {
	ctx context.Context
	tx  *sql.Tx
	r   *rand.Rand
	// x draws what was added to the demo data later (ids of records and
	// values that complete the spec's fields), so that r's sequence, and
	// with it every earlier id and value, stays as it was.
	x       *rand.Rand
	scale   int
	network string
	owner   string // owner membership

	users       []wire.User
	memberships []string
	companies   []wire.Company
	plans       []wire.Plan
	// per network, for redemptions
	allBookings []wire.Booking
	allOrders   []wire.Order
	allEvents   []wire.Event
	allProducts []wire.Product
	locations   []string
}

func (g *gen) uuid() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], g.r.Uint64())
	binary.LittleEndian.PutUint64(b[8:], g.r.Uint64())
	return formatUUID(b)
}

// xuuid is a uuid drawn from x (see gen.x).
func (g *gen) xuuid() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], g.x.Uint64())
	binary.LittleEndian.PutUint64(b[8:], g.x.Uint64())
	return formatUUID(b)
}

func pick[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

// ago returns a time up to days days before the base date, whole seconds.
func (g *gen) ago(days int) time.Time {
	return demoBase.Add(-time.Duration(1+g.r.Int64N(int64(days)*86400)) * time.Second)
}

func (g *gen) put(table, id string, created time.Time, cols map[string]any, doc any) error {
	return insert(g.ctx, g.tx, record{table: table, id: id, network: g.network, createDate: created, cols: cols, doc: doc})
}

func ts(t time.Time) *wire.Timestamp { return wire.NewTimestamp(t) }

var (
	firstNames = []string{"Alex", "Sam", "Maria", "Jonas", "Aisha", "Liam", "Sofia", "Noah", "Yuki", "Lucas", "Emma", "Omar", "Chloe", "Mateo", "Ingrid", "Ravi"}
	lastNames  = []string{"Jansen", "Müller", "Silva", "Berg", "Okafor", "Novak", "Rossi", "Dubois", "Tanaka", "García", "Larsen", "Kowalski", "Haddad", "Smith"}
	resTypes   = []string{"dedicatedDesk", "equipment", "hotDesk", "office", "parkingLot", "room", "station", "conferenceRoom", "eventSpace", "meetingRoom", "phoneBooth", "studio"}
	visibility = []string{"admins", "exclusiveMembers", "members", "networkMembers", "public"}
	prepMins   = []string{"zeroMinutes", "fiveMinutes", "tenMinutes", "fifteenMinutes", "thirtyMinutes", "sixtyMinutes"}
	refundThr  = []string{"noRefund", "zeroMinutes", "fifteenMinutes", "thirtyMinutes", "oneHour", "twoHours", "oneDay", "oneWeek"}
	productSet = []struct{ title, desc string }{
		{"Coffee beans", "Single-origin beans roasted locally"}, {"Locker rental", "A personal locker for a month"},
		{"Printing credits", "Black-and-white and colour prints"}, {"Lunch box", "Daily fresh lunch"},
		{"Notebook", "A5 dotted notebook"}, {"Guest day pass", "Bring a guest for a day"}, {"Phone charger", "USB-C fast charger"},
	}
)

// network1 generates a network with a location per city.
func (g *gen) network1(name string, cities []string, main bool) error {
	created := demoBase.AddDate(-1, 0, 0)
	if err := insertNetwork(g.ctx, g.tx, g.network, name, created); err != nil {
		return err
	}
	nUsers := 20*g.scale + 5
	for i := range nUsers {
		fn, ln := pick(g, firstNames), pick(g, lastNames)
		if i == 0 {
			fn, ln = "Robin", "Owner"
		}
		u := wire.User{ID: g.uuid(), Name: new(fn), Surname: new(ln),
			Email:       new(asciiEmail(fmt.Sprintf("%s.%s.%d@example.com", fn, ln, i))),
			PhoneNumber: new(fmt.Sprintf("+31 20 555 %04d", g.r.IntN(10000))), PhotoURL: new(fmt.Sprintf("https://media.workspace.example/avatars/%d.jpg", i)),
			About: new(fmt.Sprintf("%s works on %s.", fn, pick(g, []string{"design", "software", "marketing", "finance", "research"})))}
		mid := g.uuid()
		if err := g.put("users", u.ID, created, userCols(u), u); err != nil {
			return err
		}
		if err := g.put("memberships", mid, created, map[string]any{"user_id": u.ID}, membershipDoc{ID: mid, UserID: u.ID}); err != nil {
			return err
		}
		g.users = append(g.users, u)
		g.memberships = append(g.memberships, mid)
	}
	g.owner = g.memberships[0]
	for i := range 5 {
		title := fmt.Sprintf("%s %s", pick(g, []string{"Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Tyrell"}), pick(g, []string{"Labs", "Studio", "BV", "GmbH", "Ltd"}))
		g.companies = append(g.companies, wire.Company{ID: g.uuid(), Title: new(title), LegalName: new(title + " Holding"),
			TaxID: new(fmt.Sprintf("NL%09dB01", g.r.IntN(1e9))), CreateDate: ts(created.AddDate(0, i, 0)), BillingAddress: new("Keizersgracht 1, Amsterdam"),
			BusinessAddress: &wire.Address{City: new("Amsterdam"), CountryCode: new("NL"), Line1: new("Keizersgracht 1"), PostalCode: new("1015 CJ")},
			Credits:         &wire.CompanyCredits{Expiring: new(float64(g.r.IntN(50))), Permanent: new(float64(g.r.IntN(200)))},
			DayPasses:       &wire.CompanyDayPass{Expiring: new(float64(g.r.IntN(10)))}, Metadata: json.RawMessage(`{"segment":"smb"}`)})
		c := &g.companies[i]
		c.BusinessAddress.Line2, c.BusinessAddress.State = new(fmt.Sprintf("Floor %d", 1+i)), new("Noord-Holland")
		c.Notes, c.SubscriptionRef = new("Invoiced monthly"), new(g.xuuid())
		if i == 4 { // a company that has left: still on its old invoices
			c.DeleteDate = ts(demoBase.AddDate(0, 0, -10))
		}
	}
	for i, p := range []string{"Flex", "Fixed desk", "Private office", "Nomad"} {
		g.plans = append(g.plans, wire.Plan{ID: g.uuid(), Title: new(p), Period: new("month"), Price: new(float64(150 + 100*i)),
			Credits: new(float64(10 * i)), DayPasses: new(float64(5 + i)), CommitmentCycles: new(float64(i))})
	}
	for _, city := range cities {
		if err := g.location(city); err != nil {
			return err
		}
	}
	return g.discounts()
}

// demoLocation is one location as its generators build it: its id and
// the records the later generators refer to.
type demoLocation struct {
	id        string
	city      string
	loc       wire.VisitLocation
	cols      map[string]any // the location_id column of its records
	resources []wire.Resource
	resByID   map[string]wire.Resource
	events    []wire.Event
	products  []wire.Product
	bookings  []wire.Booking
	orders    []wire.Order
}

// location generates one location with all its records, each kind from
// the ones generated before it (the draws from g.r in this order).
func (g *gen) location(city string) error {
	l, err := g.newLocation(city)
	if err != nil {
		return err
	}
	for _, step := range []func(*demoLocation) error{g.resources, g.events, g.products, g.bookings, g.orders, g.billing, g.transactions} {
		if err := step(l); err != nil {
			return err
		}
	}
	if err := g.feed(l.id); err != nil {
		return err
	}
	return g.visitors(l.loc)
}

// newLocation generates the location itself, the home of every company
// that has none yet.
func (g *gen) newLocation(city string) (*demoLocation, error) {
	loc := wire.VisitLocation{ID: g.uuid(), Title: new(city + " " + pick(g, []string{"Canal House", "Loft", "Riverside", "Harbour", "Central"})),
		Address:    new(fmt.Sprintf("%d %s Street, %s", 1+g.r.IntN(200), pick(g, []string{"Market", "Station", "Park", "Harbour"}), city)),
		TimezoneID: new(map[string]string{"Amsterdam": "Europe/Amsterdam", "Berlin": "Europe/Berlin", "Lisbon": "Europe/Lisbon", "Oslo": "Europe/Oslo"}[city])}
	lid := loc.ID
	g.locations = append(g.locations, lid)
	for i := range g.companies { // every company's home is the first location
		if g.companies[i].LocationRef == nil {
			g.companies[i].LocationRef = new(lid)
		}
	}
	if err := g.put("locations", lid, demoBase.AddDate(-1, 0, 0), nil, loc); err != nil {
		return nil, err
	}
	return &demoLocation{id: lid, city: city, loc: loc, cols: map[string]any{"location_id": lid}}, nil
}

// resources generates one resource of every type, then desks inside the
// offices and rooms.
func (g *gen) resources(l *demoLocation) error {
	var parents []wire.Resource
	for _, typ := range resTypes {
		if err := g.resource(l, typ, nil, 1); err != nil {
			return err
		}
		if typ == "office" || typ == "room" {
			parents = append(parents, l.resources[len(l.resources)-1])
		}
	}
	for i := range 4 * g.scale {
		p := parents[i%len(parents)]
		if err := g.resource(l, pick(g, []string{"dedicatedDesk", "hotDesk"}), new(p.ID), i+2); err != nil {
			return err
		}
	}
	return nil
}

// resource generates the nth resource of type typ in l, inside parent (nil:
// none).
func (g *gen) resource(l *demoLocation, typ string, parent *string, n int) error {
	lid, city := l.id, l.city
	capacity := 1.0
	switch typ {
	case "room", "meetingRoom", "conferenceRoom":
		capacity = float64(4 + g.r.IntN(10))
	case "eventSpace", "office":
		capacity = float64(10 + g.r.IntN(40))
	case "hotDesk", "parkingLot":
		capacity = float64(2 + g.r.IntN(4))
	}
	id := g.uuid()
	title := fmt.Sprintf("%s %s %d", city, typ, n)
	res := wire.Resource{ID: id, LocationRef: new(lid), NetworkRef: new(g.network), ParentRef: parent, Title: new(title),
		Description: new("A " + typ + " in " + city), Locale: new("en"), ImageURL: new("https://media.workspace.example/resources/" + id + ".jpg"),
		CreateDate: ts(g.ago(300)), Image: &wire.ResourceImage{Key: new("resources/" + id + ".jpg")}, Type: new(typ),
		Visibility: new(pick(g, visibility)), BookingPermission: new(pick(g, visibility)), Capacity: new(capacity),
		BookingStepMinutes: new(30.0), DayPassesEnabled: new(g.r.IntN(2) == 0), PreparationMinutes: new(pick(g, prepMins)),
		RefundThreshold: new(pick(g, refundThr)), AutoRelease: &wire.ResourceAutoRelease{Enabled: new(g.r.IntN(2) == 0), Interval: new("fiveMinutes")},
		CheckIn: &wire.ResourceCheckIn{Interval: new("zeroMinutes")},
		ConfirmationEmail: &wire.ResourceConfirmationEmail{BookingCreatedByAdmin: new(true), BookingCreatedByMember: new(true),
			BookingCreatedByNetworkMember: new(false), BookingCreatedByPublic: new(false), Template: new("default")},
		Credits: &wire.ResourcePricing{Enabled: new(true), Price: new(float64(1 + g.r.IntN(4)))},
		Money: &wire.ResourcePricing{Enabled: new(true), Price: new(float64(5 * (1 + g.r.IntN(8)))),
			Tiers: []wire.PricingTier{{From: new(0.0), UpTo: new(4.0), UnitAmount: new(10.0), FlatAmount: new(0.0)}, {From: new(4.0), UnitAmount: new(8.0), FlatAmount: new(5.0)}}},
		DynamicPricing:   &wire.ResourceDynamicPricing{Enabled: new(false), DeltaAbove: new(10.0), DeltaBelow: new(5.0)},
		Duration:         &wire.ResourceDuration{Min: new(30.0), Max: new(600.0), Public: &wire.ResourcePublicDuration{Enabled: new(false), Min: new(60.0), Max: new(240.0)}},
		ExternalCalendar: &wire.ResourceExternalCalendar{ID: new("cal-" + id[:8]), TwoWaySyncEnabled: new(false)},
		Plans: &wire.ResourcePlans{Enabled: new(true), Tiers: []wire.PlanTier{{ID: g.uuid(), Entire: new(true), Plan: &g.plans[g.r.IntN(len(g.plans))],
			Period: new("month"), Price: new(250.0), Title: new("Monthly"), Discounts: &wire.PlanTierDiscounts{Desks: new(10.0), Rooms: new(5.0)}}}},
		Schedule: &wire.ResourceSchedule{Enabled: new(true), Default: &wire.ScheduleDefault{ClosedDays: []string{"2026-12-25"},
			Items: []wire.ScheduleItem{{Days: &wire.ScheduleDays{Monday: new(true), Tuesday: new(true), Wednesday: new(true), Thursday: new(true), Friday: new(true), Saturday: new(false), Sunday: new(false)},
				Hours: &wire.ScheduleHours{From: new("08:00"), To: new("20:00")}}}}},
	}
	if typ == "equipment" {
		res.AccessVendor3GroupRef = new(float64(g.r.IntN(1000)))
	}
	g.completeResource(&res, typ, title)
	l.resources = append(l.resources, res)
	return g.put("resources", id, res.CreateDate.Time, map[string]any{"location_id": lid, "parent_id": parent}, res)
}

// completeResource sets the fields of res that complete the spec (new ids
// drawn from x, see gen).
func (g *gen) completeResource(res *wire.Resource, typ, title string) {
	id := res.ID
	res.Credits.Tiers = []wire.PricingTier{{From: new(0.0), UpTo: new(8.0), UnitAmount: res.Credits.Price, FlatAmount: new(0.0)}}
	tier := &res.Plans.Tiers[0]
	tier.CommitmentCycles, tier.Credits, tier.DayPasses, tier.SetupFee = new(3.0), new(20.0), new(4.0), new(50.0)
	tier.Description, tier.SelfSignupType, tier.PrintVendor1GroupRef = new("Monthly access to "+title), new("approval"), new("print-"+id[:8])
	tier.Discounts.CreditPackages, tier.Discounts.Equipment, tier.Discounts.Events, tier.Discounts.Shop = new(5.0), new(0.0), new(15.0), new(10.0)
	res.Schedule.Public = &wire.SchedulePublic{Enabled: new(typ == "eventSpace" || typ == "meetingRoom"), ClosedDays: []string{"2026-12-25", "2027-01-01"},
		Items: []wire.ScheduleItem{{Days: &wire.ScheduleDays{Monday: new(true), Tuesday: new(true), Wednesday: new(true), Thursday: new(true), Friday: new(true), Saturday: new(false), Sunday: new(false)},
			Hours: &wire.ScheduleHours{From: new("09:00"), To: new("18:00")}}}}
	switch typ {
	case "office", "room", "meetingRoom", "conferenceRoom":
		res.AccessVendor1GroupRef, res.AccessVendor2GroupRef = new("door-"+id[:8]), new("lift-"+id[:4])
		res.AccessVendor4AccessGroupRef, res.AccessVendor5GroupRef = new(g.xuuid()), new(g.xuuid())
	}
}

// events generates l's events.
func (g *gen) events(l *demoLocation) error {
	lid, city := l.id, l.city
	for i := range 4 * g.scale {
		start := demoBase.Add(time.Duration(g.r.IntN(60*24)-30*24) * time.Hour).Truncate(time.Hour)
		e := wire.Event{ID: g.uuid(), LocationRef: new(lid), NetworkRef: new(g.network),
			Title:       new(fmt.Sprintf("%s %s", pick(g, []string{"Breakfast", "Workshop", "Meetup", "Talk", "Yoga"}), pick(g, []string{"Monday", "for founders", "on design", "& networking"}))),
			Description: new("Join us in " + city), ImageURL: new(fmt.Sprintf("https://media.workspace.example/events/%d.jpg", i)), Venue: new(*l.loc.Title),
			CreateDate: ts(g.ago(120)), StartDate: ts(start), EndDate: ts(start.Add(2 * time.Hour)), ApplicationType: new(pick(g, []string{"purchase", "none"})),
			VisibilityType: new(pick(g, []string{"public", "admins", "networkMembers", "members"})), RefundThreshold: new(pick(g, refundThr)),
			ShowAttendees: new(true), LimitedAttendees: &wire.LimitedAttendees{Enabled: new(true), Limit: new(float64(20 + g.r.IntN(80)))},
			Price: &wire.EventPrice{Credits: &wire.CreditsPrice{Amount: new(2.0), Enabled: new(true)}, Money: &wire.EventMoneyPrice{Amount: new(float64(10 + 5*g.r.IntN(5))), Enabled: new(true)}}}
		l.events = append(l.events, e)
		if err := g.put("events", e.ID, e.CreateDate.Time, l.cols, e); err != nil {
			return err
		}
	}
	g.allEvents = append(g.allEvents, l.events...)
	return nil
}

// products generates l's products with their options.
func (g *gen) products(l *demoLocation) error {
	for i := range 5 * g.scale {
		ps := productSet[(i+len(g.locations))%len(productSet)]
		created := g.ago(200)
		p := wire.Product{ID: g.uuid(), CategoryRef: new(g.uuid()), LocationRef: new(l.id), CreateDate: ts(created), UpdateDate: ts(created.Add(48 * time.Hour)),
			Title: new(ps.title), Description: new(ps.desc), ImageURL: new(fmt.Sprintf("https://media.workspace.example/products/%d.jpg", i)),
			RefundPolicy: new(pick(g, []string{"noRefund", "statusNew"})), Visibility: new(pick(g, []string{"public", "admins", "members", "networkMembers"})),
			Featured: new(i == 0), Media: []wire.Media{{Key: new(fmt.Sprintf("products/%d.jpg", i)), URL: new(fmt.Sprintf("https://media.workspace.example/products/%d.jpg", i))}},
			Order: &wire.ProductOrdering{Enabled: new(true), ConfirmationEmail: &wire.OrderConfirmationEmail{Enabled: new(true), Template: new("order")}}}
		for j := range 1 + g.r.IntN(3) {
			p.Options = append(p.Options, wire.ProductOption{ID: g.uuid(), Available: new(j != 2), CreateDate: ts(created),
				CustomTax: &wire.CustomTax{Enabled: new(j == 1), Rate: new(9.0)}, Description: new("Option " + []string{"S", "M", "L"}[j]),
				Title: new([]string{"Small", "Medium", "Large"}[j]),
				Price: &wire.ProductOptionPrice{Credits: &wire.CreditsPrice{Amount: new(float64(1 + j)), Enabled: new(j == 0)},
					Money: &wire.MoneyPrice{Amount: new(float64(4 + 3*j)), CurrencyCode: new("EUR"), Enabled: new(true)}},
				Stock: &wire.Stock{Enabled: new(true), Quantity: new(float64(g.r.IntN(100)))}})
		}
		l.products = append(l.products, p)
		if err := g.put("products", p.ID, created, l.cols, p); err != nil {
			return err
		}
	}
	return nil
}

// bookings generates l's bookings, on distinct 3-hour slots so they never
// overlap.
func (g *gen) bookings(l *demoLocation) error {
	for i := range 15 * g.scale {
		res := l.resources[g.r.IntN(len(l.resources))]
		start := demoBase.Add(time.Duration(i*3-20*g.scale) * time.Hour)
		end := start.Add(time.Duration(1+g.r.IntN(4)) * 30 * time.Minute)
		mi := g.r.IntN(len(g.memberships))
		owner := g.users[mi]
		created := start.Add(-time.Duration(1+g.r.IntN(200)) * time.Hour)
		if created.After(demoBase) {
			created = demoBase.Add(-time.Duration(1+i) * time.Minute)
		}
		amount := round2(*res.Money.Price * end.Sub(start).Hours())
		b := wire.Booking{ID: g.uuid(), ResourceRef: new(res.ID), StartDate: ts(start), EndDate: ts(end), Title: res.Title,
			Memo: new("Booked via the app"), MembershipRefOwner: new(g.memberships[mi]), UserOwner: &owner, Seats: new(1.0),
			CreateDate: ts(created), UpdateDate: ts(created),
			Attendees: []wire.BookingAttendee{{MembershipRef: new(g.memberships[mi]), User: &owner}},
			Payment: &wire.ItemPayment{Amount: new(amount), CurrencyCode: new("EUR"), Status: new("succeeded"), Type: new(pick(g, []string{"credits", "external", "stripe"})),
				Tax: &wire.ItemPaymentTax{Inclusive: new(true), Rate: new(taxRate)}, TransactionRef: new(g.uuid())}}
		if i%3 == 0 {
			o2 := g.r.IntN(len(g.memberships))
			b.Attendees = append(b.Attendees, wire.BookingAttendee{MembershipRef: new(g.memberships[o2]), User: &g.users[o2]})
		}
		l.bookings = append(l.bookings, b)
		if err := g.put("bookings", b.ID, created, map[string]any{"location_id": l.id, "resource_id": res.ID,
			"start_date": micros(start), "end_date": micros(end), "seats": 1}, b); err != nil {
			return err
		}
	}
	g.allBookings = append(g.allBookings, l.bookings...)
	l.resByID = map[string]wire.Resource{}
	for _, r := range l.resources {
		l.resByID[r.ID] = r
	}
	return nil
}

// orders generates l's orders, in every status.
func (g *gen) orders(l *demoLocation) error {
	for i := range 30 * g.scale {
		p := l.products[g.r.IntN(len(l.products))]
		opt := p.Options[g.r.IntN(len(p.Options))]
		mi := g.r.IntN(len(g.memberships))
		qty := float64(1 + g.r.IntN(3))
		created := g.ago(180)
		o := wire.Order{ID: g.uuid(), LocationRef: new(l.id), MembershipRef: new(g.memberships[mi]), Number: new(float64(1000 + i)),
			Comment: new(pick(g, []string{"", "Please deliver at reception", "Gift wrap"})), CreateDate: ts(created),
			Option: &wire.ProductOption{ID: opt.ID, Title: opt.Title}, Quantity: new(qty),
			Product: &wire.Product{ID: p.ID, Title: p.Title, Description: p.Description, CreateDate: p.CreateDate, Media: p.Media},
			Status:  new([]wire.OrderStatus{wire.OrderStatusNew, wire.OrderStatusInProgress, wire.OrderStatusCompleted, wire.OrderStatusCanceled}[i%4]),
			User:    &g.users[mi],
			Payment: &wire.ItemPayment{Amount: new(round2(*opt.Price.Money.Amount * qty)), CurrencyCode: new("EUR"), Status: new("succeeded"),
				Type: new(pick(g, []string{"credits", "external"})), Tax: &wire.ItemPaymentTax{Inclusive: new(true), Rate: new(taxRate)}, TransactionRef: new(g.uuid())}}
		if i%8 == 7 { // some canceled orders were deleted afterwards
			o.DeleteDate = ts(created.Add(48 * time.Hour))
		}
		l.orders = append(l.orders, o)
		if err := g.put("orders", o.ID, created, map[string]any{"location_id": l.id, "status": string(*o.Status)}, o); err != nil {
			return err
		}
	}
	g.allOrders = append(g.allOrders, l.orders...)
	g.allProducts = append(g.allProducts, l.products...)
	return nil
}

// itemAmounts fills the amounts of an invoice item: prices include tax at
// rate percent; total = unit*quantity - discount.
func itemAmounts(it *wire.InvoiceItem, unit, qty, discount, rate float64) {
	gross := round2(unit * qty)
	total := round2(gross - discount)
	excl := round2(total / (1 + rate/100))
	unitExcl := round2(unit / (1 + rate/100))
	tax := &wire.Tax{Amount: new(round2(total - excl)), Inclusive: new(true), Rate: new(rate), TaxableAmount: new(excl)}
	it.UnitAmount, it.UnitExcludingTaxAmount, it.Quantity = new(unit), new(unitExcl), new(qty)
	it.Amount, it.DiscountedAmount, it.TotalAmount, it.TotalExcludingTaxAmount = new(gross), new(discount), new(total), new(excl)
	it.NetUnitAmount = new(round2(excl / qty))
	it.Tax = tax
	it.CurrencyCode = new("EUR")
	it.BaseAmounts = &wire.LineBaseAmounts{CurrencyCode: new("EUR"), DiscountedAmount: new(discount), Tax: tax, TotalAmount: new(total),
		TotalExcludingTaxAmount: new(excl), UnitAmount: new(unit), UnitExcludingTaxAmount: new(unitExcl)}
}

var itemTypes = []string{"booking", "order", "eventTicket", "creditPackage", "subscription", "custom"}

// billing generates invoices with items of every product type, then credit
// notes against them.
func (g *gen) billing(l *demoLocation) error {
	b := &demoBilling{l: l, billed: map[int]bool{}, prodByID: map[string]wire.Product{}}
	for _, p := range l.products {
		b.prodByID[p.ID] = p
	}
	var invs []*invoiceRec
	for i := range 12 * g.scale {
		rec, err := g.invoice(b, i)
		if err != nil {
			return err
		}
		invs = append(invs, rec)
	}
	notes := g.creditNotes(l, invs)
	return g.putBilling(b, invs, notes)
}

// demoBilling is what the invoices of a location share while they are
// generated.
type demoBilling struct {
	l           *demoLocation
	prodByID    map[string]wire.Product
	billed      map[int]bool // orders whose payment names the item that invoiced them
	deletedItem bool         // a draft invoice has an item removed
}

// invoiceRec is an invoice as billing builds it: its items, how much of
// each (and how many units) credit notes credit.
type invoiceRec struct {
	inv         wire.Invoice
	items       []wire.InvoiceItem
	credited    []float64
	creditedQty []float64
	created     time.Time
}

// add appends an item, not credited yet.
func (rec *invoiceRec) add(it wire.InvoiceItem) {
	rec.items = append(rec.items, it)
	rec.credited = append(rec.credited, 0)
	rec.creditedQty = append(rec.creditedQty, 0)
}

var invoiceStatuses = []string{"paid", "issued", "paid", "draft", "paid", "voided", "issued"}

// invoice generates the ith invoice of b's location: the first has an item
// of every type, the others one to four drawn; a paid one its transaction.
func (g *gen) invoice(b *demoBilling, i int) (*invoiceRec, error) {
	lid := b.l.id
	created := g.ago(150)
	mi := g.r.IntN(len(g.memberships))
	company := g.companies[g.r.IntN(len(g.companies))]
	status := invoiceStatuses[i%len(invoiceStatuses)]
	number := fmt.Sprintf("INV-%s-%04d", strings.ToUpper(lid[:4]), i+1)
	rec := &invoiceRec{created: created}
	types := itemTypes
	if i > 0 {
		types = nil
		for range 1 + g.r.IntN(4) {
			types = append(types, pick(g, itemTypes))
		}
	}
	invID := g.uuid()
	for _, typ := range types {
		it := wire.InvoiceItem{ID: g.uuid(), InvoiceRef: new(invID), CompanyRef: new(company.ID), LocationRef: new(lid),
			MembershipRef: new(g.memberships[mi]), MembershipRefCreatedBy: new(g.owner), CreateDate: ts(created), Type: new(typ),
			UserCreatedBy: &wire.User{ID: g.users[0].ID, Name: g.users[0].Name, Surname: g.users[0].Surname},
			Period:        &wire.Period{StartDate: ts(created), EndDate: ts(created.AddDate(0, 1, 0))}}
		unit, qty, discount, rate := g.invoiceItemProduct(b, &it, i, created)
		it.Description = it.Product.Title
		itemAmounts(&it, unit, qty, discount, rate)
		rec.add(it)
	}
	if status == "draft" && !b.deletedItem {
		// An item removed from the draft: still listed, with its
		// deleteDate, and no longer counted in the totals.
		b.deletedItem = true
		it := wire.InvoiceItem{ID: g.xuuid(), InvoiceRef: new(invID), CompanyRef: new(company.ID), LocationRef: new(lid),
			MembershipRef: new(g.memberships[mi]), MembershipRefCreatedBy: new(g.owner), CreateDate: ts(created), DeleteDate: ts(created.Add(time.Hour)),
			Type: new("custom"), UserCreatedBy: &wire.User{ID: g.users[0].ID, Name: g.users[0].Name, Surname: g.users[0].Surname},
			Period:  &wire.Period{StartDate: ts(created), EndDate: ts(created.AddDate(0, 1, 0))},
			Product: &wire.InvoiceItemProduct{Type: new("custom"), Title: new("Custom service (removed)")}, Description: new("Custom service (removed)")}
		itemAmounts(&it, 25, 1, 0, taxRate)
		rec.add(it)
	}
	u := g.users[mi]
	rec.inv = invoiceDoc(lid, invID, number, status, created, &company, &u, g.memberships[mi], rec.items)
	if err := g.invoicePayment(lid, &rec.inv, i, created, &company, &u, g.memberships[mi]); err != nil {
		return nil, err
	}
	return rec, nil
}

// invoiceItemProduct sets what item it of the ith invoice sells (by its
// type: a booking, an order, an event ticket, a credit package, a
// subscription or a custom service) and returns its price: unit amount,
// quantity, discount and tax rate.
func (g *gen) invoiceItemProduct(b *demoBilling, it *wire.InvoiceItem, i int, created time.Time) (unit, qty, discount, rate float64) {
	typ := *it.Type
	unit, qty, discount, rate = 10.0, 1.0, 0.0, taxRate
	prod := &wire.InvoiceItemProduct{Type: new(typ)}
	switch typ {
	case "booking":
		bk := b.l.bookings[g.r.IntN(len(b.l.bookings))]
		res := b.l.resByID[*bk.ResourceRef]
		unit = *bk.Payment.Amount
		prod.BookingRef, prod.Title = new(bk.ID), res.Title
		it.Booking = &wire.InvoiceItemBooking{ID: bk.ID, StartDate: bk.StartDate, EndDate: bk.EndDate, Resource: &wire.Resource{ID: res.ID, Title: res.Title, Type: res.Type}}
	case "order":
		oi := g.r.IntN(len(b.l.orders))
		o := b.l.orders[oi]
		if o.Payment.InvoiceItemRef == nil {
			o.Payment.InvoiceItemRef = new(it.ID) // Payment is shared with orders[oi]
			b.billed[oi] = true
		}
		p := b.prodByID[o.Product.ID]
		for _, op := range p.Options {
			if op.ID == o.Option.ID {
				unit = *op.Price.Money.Amount
			}
		}
		qty = *o.Quantity
		prod.OrderRef, prod.OptionRef, prod.Title = new(o.ID), new(o.Option.ID), p.Title
		it.Order = &wire.InvoiceItemOrder{CreateDate: o.CreateDate, Product: &wire.Product{ID: p.ID, Title: p.Title},
			ProductOption: &wire.ProductOption{ID: o.Option.ID, Title: o.Option.Title}, Quantity: o.Quantity}
	case "eventTicket":
		e := b.l.events[g.r.IntN(len(b.l.events))]
		unit, qty = *e.Price.Money.Amount, float64(1+g.r.IntN(2))
		prod.EventTicketRef, prod.Title = new(g.uuid()), e.Title
		it.Ticket = &wire.InvoiceItemTicket{CreateDate: ts(created), Event: &wire.Event{ID: e.ID, Title: e.Title, StartDate: e.StartDate, EndDate: e.EndDate}}
	case "creditPackage":
		unit, rate = float64(50*(1+g.r.IntN(4))), 0
		prod.Title = new("Credit package")
		it.CreditPackage = &wire.CreditPackageAmount{Amount: new(unit / 5)}
	case "subscription":
		unit, discount = g.subscriptionItem(it, prod, i, created)
	case "custom":
		unit, qty = 25, float64(1+g.r.IntN(5))
		prod.Title = new("Custom service")
	}
	it.Product = prod
	return unit, qty, discount, rate
}

// subscriptionItem makes it a plan's subscription with its 10 % coupon
// (an amount off for three months on odd invoices) and returns the unit
// amount and discount.
func (g *gen) subscriptionItem(it *wire.InvoiceItem, prod *wire.InvoiceItemProduct, i int, created time.Time) (unit, discount float64) {
	pl := g.plans[g.r.IntN(len(g.plans))]
	unit = *pl.Price
	discount = round2(unit * 0.1)
	prod.Title = pl.Title
	it.SubscriptionRef = new(g.uuid())
	it.Plan = &wire.InvoiceItemPlan{ID: pl.ID, Title: pl.Title, StartDate: ts(created), EndDate: ts(created.AddDate(0, 1, 0))}
	it.Discounts = []wire.Discount{{Coupon: &wire.DiscountCoupon{ID: g.uuid(), PercentOff: new(10.0), Type: new("percent"), Duration: new("once")}}}
	d := &it.Discounts[0]
	if i%2 == 1 { // the same 10 %, as an amount off for three months
		d.Coupon.PercentOff, d.Coupon.Type, d.Coupon.Duration = nil, new("amount"), new("repeating")
		d.Coupon.AmountOff, d.Coupon.CurrencyCode, d.Coupon.DurationInMonths = new(discount), new("EUR"), new(3.0)
	}
	d.SubscriptionID = it.SubscriptionRef
	d.Promocode = &wire.DiscountPromocode{ID: g.xuuid(), Code: new("PLAN10"), Expiration: ts(demoBase.AddDate(0, 6, 0)), LimitByFirstPurchase: new(true)}
	return unit, discount
}

// invoiceTotals sums the items not deleted: the total, the total without
// tax, and the tax per rate, by rate.
func invoiceTotals(items []wire.InvoiceItem) (total, excl float64, taxList []wire.Tax) {
	taxes := map[float64]*wire.Tax{}
	for _, it := range items {
		if it.DeleteDate != nil {
			continue
		}
		total = round2(total + *it.TotalAmount)
		excl = round2(excl + *it.TotalExcludingTaxAmount)
		t := taxes[*it.Tax.Rate]
		if t == nil {
			t = &wire.Tax{Amount: new(0.0), Inclusive: new(true), Rate: it.Tax.Rate, TaxableAmount: new(0.0)}
			taxes[*it.Tax.Rate] = t
		}
		*t.Amount = round2(*t.Amount + *it.Tax.Amount)
		*t.TaxableAmount = round2(*t.TaxableAmount + *it.Tax.TaxableAmount)
	}
	for _, t := range taxes {
		taxList = append(taxList, *t)
	}
	sort.Slice(taxList, func(a, b int) bool { return *taxList[a].Rate < *taxList[b].Rate })
	return total, excl, taxList
}

// invoiceDoc is the invoice of items to company, for user u of membership,
// in status: its amounts are the items' totals, none paid yet but when
// status is "paid".
func invoiceDoc(lid, invID, number, status string, created time.Time, company *wire.Company, u *wire.User, membership string, items []wire.InvoiceItem) wire.Invoice {
	total, excl, taxList := invoiceTotals(items)
	paid := 0.0
	if status == "paid" {
		paid = total
	}
	inv := wire.Invoice{ID: invID, Number: new(number), Title: new("Invoice " + number), Status: new(status), CreateDate: ts(created),
		IssueDate: ts(created), DueDate: ts(created.AddDate(0, 0, 14)), DueDays: new(14.0), DueType: new("days"),
		Amount: new(total), AmountDue: new(total), AmountPaid: new(paid), AmountRemaining: new(round2(total - paid)), AppliedBalance: new(0.0), StartingBalance: new(0.0),
		SubtotalAmount: new(total), SubtotalExcludingTaxAmount: new(excl), TotalAmount: new(total), TotalExcludingTaxAmount: new(excl),
		PostPaymentCreditNotesAmount: new(0.0), PrePaymentCreditNotesAmount: new(0.0), PostPaymentCreditAmount: new(0.0), PrePaymentCreditAmount: new(0.0),
		Taxes: taxList, CurrencyCode: new("EUR"),
		BaseAmounts: &wire.InvoiceBaseAmounts{AmountDue: new(total), AppliedBalance: new(0.0), CurrencyCode: new("EUR"), PostPaymentCreditNotesAmount: new(0.0),
			PrePaymentCreditNotesAmount: new(0.0), SubtotalAmount: new(total), SubtotalExcludingTaxAmount: new(excl), Taxes: taxList, TotalAmount: new(total), TotalExcludingTaxAmount: new(excl)},
		CompanyRef: new(company.ID), LocationRef: new(lid), MembershipRef: new(membership), Company: company,
		Customer:        &wire.InvoiceCustomer{ID: company.ID, Title: company.Title, Type: new("company"), User: &wire.User{ID: u.ID, Name: u.Name, Surname: u.Surname, PhotoURL: u.PhotoURL}},
		CustomerAddress: company.BusinessAddress, CustomerName: company.Title, CustomerTaxID: company.TaxID, Memo: new("Thank you for your business"),
		PdfURL: new("https://files.workspace.example/invoices/" + number + ".pdf"), TimezoneID: new("Europe/Amsterdam"), User: u}
	if status == "voided" {
		inv.VoidDate = ts(created.AddDate(0, 0, 3))
	}
	for _, it := range items {
		if it.SubscriptionRef != nil { // created by its subscription
			inv.SubscriptionRef, inv.AutoCreateDate = it.SubscriptionRef, ts(created)
		}
	}
	return inv
}

// invoicePayment records the payment of inv, the ith invoice: a paid one
// gets its succeeded card payment and transaction (stored), every other
// issued one a canceled attempt.
func (g *gen) invoicePayment(lid string, inv *wire.Invoice, i int, created time.Time, company *wire.Company, u *wire.User, membership string) error {
	status, total, number := *inv.Status, *inv.TotalAmount, *inv.Number
	switch {
	case status == "paid":
		txID := g.uuid()
		inv.ReceiptPdfURL = new("https://files.workspace.example/receipts/" + number + ".pdf")
		inv.Transaction = &wire.InvoiceTransaction{ID: txID, Amount: new(total), CreateDate: ts(created.Add(time.Hour)), Status: new("succeeded"),
			PaymentMethod: &wire.PaymentMethod{Label: new("Visa •••• 4242"), Type: new("stripe")}}
		inv.Payments = []wire.InvoicePayment{{CreateDate: ts(created.Add(time.Hour)), Status: new("succeeded"), TransactionRef: new(txID), Refundable: new(true),
			Method: &wire.InvoicePaymentMethod{Type: new("card"), PaymentGateway: &wire.PaymentGateway{Gateway: new("stripe"), Label: new("Stripe")}},
			Price:  &wire.InvoicePaymentPrice{Type: new("money"), Money: &wire.Money{CurrencyCode: new("EUR"), GrossAmount: new(total)}}}}
		tr := wire.Transaction{ID: txID, Amount: new(total), CreateDate: ts(created.Add(time.Hour)), CurrencyCode: new("EUR"), LocationRef: new(lid),
			MembershipRef: new(membership), Status: new(wire.TransactionStatusSucceeded), Type: new(wire.TransactionTypeInvoice),
			PaymentMethod: &wire.PaymentMethod{Label: new("Visa •••• 4242"), Type: new("stripe")}, Invoice: &wire.Invoice{ID: inv.ID, Title: inv.Title},
			Company: company, User: u}
		return g.put("transactions", txID, tr.CreateDate.Time, map[string]any{"location_id": lid, "status": "succeeded", "type": "invoice"}, tr)
	case status == "issued" && i%2 == 1:
		inv.Payments = []wire.InvoicePayment{{CreateDate: ts(created.Add(2 * time.Hour)), Status: new("canceled"), TransactionRef: new(g.uuid()), Refundable: new(false),
			Method: &wire.InvoicePaymentMethod{Type: new("card"), PaymentGateway: &wire.PaymentGateway{Gateway: new("stripe"), Label: new("Stripe")}},
			Price:  &wire.InvoicePaymentPrice{Type: new("money"), Money: &wire.Money{CurrencyCode: new("EUR"), GrossAmount: new(total)}}}}
	}
	return nil
}

// noteRec is a credit note with its creation time.
type noteRec struct {
	note    wire.CreditNote
	created time.Time
}

// creditNotes generates the credit notes of l's invoices: amount lines
// crediting part of the remaining amount, so nothing is ever
// over-credited; the first invoice gets some first. The last note of the
// location is voided: it credits nothing.
func (g *gen) creditNotes(l *demoLocation, invs []*invoiceRec) []noteRec {
	var notes []noteRec
	perInvoice := map[string]int{}
	for k := 0; len(notes) < 30*g.scale && k < 300*g.scale; k++ {
		rec := invs[0]
		if k >= 3 {
			rec = invs[g.r.IntN(len(invs))]
		}
		if st := *rec.inv.Status; st == "voided" || st == "draft" {
			continue
		}
		idx := g.r.IntN(len(rec.items))
		rem := round2(*rec.items[idx].TotalAmount - rec.credited[idx])
		if rem < 1 {
			continue
		}
		perInvoice[rec.inv.ID]++
		voided := len(notes) == 30*g.scale-1
		notes = append(notes, g.creditNote(l, rec, idx, k, rem, perInvoice[rec.inv.ID], voided))
	}
	return notes
}

// creditNote generates the seq-th credit note of rec's invoice, the kth
// tried: it credits 30 % (and 0.50) of rem, what item idx has left, or,
// voided, nothing.
func (g *gen) creditNote(l *demoLocation, rec *invoiceRec, idx, k int, rem float64, seq int, voided bool) noteRec {
	it := rec.items[idx]
	a := round2(rem*0.3 + 0.5)
	if !voided {
		rec.credited[idx] = round2(rec.credited[idx] + a)
	}
	excl := round2(a * *it.TotalExcludingTaxAmount / *it.TotalAmount)
	created := rec.created.Add(time.Duration(1+g.r.IntN(20*24)) * time.Hour)
	if created.After(demoBase) {
		created = demoBase.Add(-time.Duration(k+1) * time.Minute)
	}
	paid := *rec.inv.Status == "paid"
	number := fmt.Sprintf("CN-%s-%d", *rec.inv.Number, seq)
	tax := &wire.Tax{Amount: new(round2(a - excl)), Inclusive: new(true), Rate: it.Tax.Rate, TaxableAmount: new(excl)}
	memo := pick(g, []string{"Customer complaint", "Duplicate charge", "Goodwill gesture"})
	line := wire.CreditNoteLine{ID: g.uuid(), InvoiceItemRef: new(it.ID), InvoiceRef: new(rec.inv.ID), LocationRef: new(l.id), NetworkRef: new(g.network),
		CreateDate: ts(created), UpdateDate: ts(created), CurrencyCode: new("EUR"), UnitAmount: it.UnitAmount, UnitExcludingTaxAmount: it.UnitExcludingTaxAmount,
		TotalAmount: new(a), TotalExcludingTaxAmount: new(excl), DiscountedAmount: new(0.0), Tax: tax, Memo: new(memo), Discounts: it.Discounts,
		BaseAmounts: &wire.LineBaseAmounts{CurrencyCode: new("EUR"), DiscountedAmount: new(0.0), Tax: tax, TotalAmount: new(a), TotalExcludingTaxAmount: new(excl),
			UnitAmount: it.UnitAmount, UnitExcludingTaxAmount: it.UnitExcludingTaxAmount}}
	if *it.Quantity >= 2 && rec.creditedQty[idx] == 0 && !voided { // a for one unit
		line.Quantity = new(1.0)
		rec.creditedQty[idx] = 1
	}
	pre, post, typ, credit := a, 0.0, "prePayment", 0.0
	var refunds []wire.CreditNoteRefund
	if paid {
		pre, post, typ, credit = 0, a, "postPayment", a
		if k%2 == 0 && rec.inv.Transaction != nil {
			credit = 0
			refunds = []wire.CreditNoteRefund{{ID: g.uuid(), Amount: new(a), CurrencyCode: new("EUR"), TransactionRef: new(rec.inv.Transaction.ID),
				Method: &wire.CreditNoteRefundMethod{Label: new("External"), Type: new("external")}}}
		}
	}
	taxes := []wire.Tax{*tax}
	note := wire.CreditNote{ID: g.uuid(), InvoiceRef: new(rec.inv.ID), LocationRef: new(l.id), NetworkRef: new(g.network), CreateDate: ts(created), UpdateDate: ts(created),
		EffectiveDate: ts(created), CurrencyCode: new("EUR"), Number: new(number), Title: new("Credit note " + number), Status: new("issued"), Type: new(typ),
		Reason: new(pick(g, creditNoteReasons)), Memo: new(memo), InternalNote: new(memo), Lines: []wire.CreditNoteLine{line}, Refunds: refunds,
		CreditAmount: new(credit), OutOfBandAmount: new(0.0), PrePaymentAmount: new(pre), PostPaymentAmount: new(post),
		SubtotalAmount: new(a), SubtotalAmountExcludingTax: new(excl), TotalAmount: new(a), TotalExcludingTaxAmount: new(excl), Taxes: taxes,
		PdfURL: new("https://files.workspace.example/credit-notes/" + number + ".pdf"),
		BaseAmounts: &wire.CreditNoteBaseAmounts{CurrencyCode: new("EUR"), PrePaymentAmount: new(pre), PostPaymentAmount: new(post), SubtotalAmount: new(a),
			SubtotalAmountExcludingTax: new(excl), Taxes: taxes, TotalAmount: new(a), TotalExcludingTaxAmount: new(excl)}}
	if voided {
		note.Status, note.VoidDate = new("voided"), ts(created.Add(time.Hour))
	} else {
		applyCreditToInvoice(&rec.inv, a, paid, credit)
		refundOnInvoice(&rec.inv, refunds, created)
	}
	return noteRec{note, created}
}

// refundOnInvoice records refunds, made at created, on inv's payment and
// transaction.
func refundOnInvoice(inv *wire.Invoice, refunds []wire.CreditNoteRefund, created time.Time) {
	for _, rf := range refunds {
		tr, pay := inv.Transaction, &inv.Payments[0]
		tr.Refunds = append(tr.Refunds, wire.TransactionRefund{ID: rf.ID, Amount: rf.Amount, CreateDate: ts(created), CurrencyCode: new("EUR")})
		sum := 0.0
		for _, r := range tr.Refunds {
			sum = round2(sum + *r.Amount)
		}
		tr.Refund = &wire.Refund{Amount: new(sum), CreateDate: ts(created)}
		if pay.Refunds == nil {
			pay.Refunds = &wire.InvoicePaymentRefunds{Type: new("money")}
		}
		pay.Refunds.Money = append(pay.Refunds.Money, wire.MoneyRefund{ID: rf.ID, CreateDate: ts(created), CurrencyCode: new("EUR"), GrossAmount: rf.Amount})
	}
}

// putBilling stores the invoices with their items, the orders they billed
// and the credit notes.
func (g *gen) putBilling(b *demoBilling, invs []*invoiceRec, notes []noteRec) error {
	lid := b.l.id
	for _, rec := range invs {
		if err := g.put("invoices", rec.inv.ID, rec.created, map[string]any{"location_id": lid, "status": *rec.inv.Status}, rec.inv); err != nil {
			return err
		}
		for pos, it := range rec.items {
			if err := g.put("invoice_items", it.ID, rec.created, map[string]any{"invoice_id": rec.inv.ID, "location_id": lid, "position": pos,
				"credited_amount": rec.credited[pos], "credited_quantity": rec.creditedQty[pos]}, it); err != nil {
				return err
			}
		}
	}
	for oi := range b.billed {
		if err := updateDoc(g.ctx, g.tx, "orders", g.network, b.l.orders[oi].ID, b.l.orders[oi]); err != nil {
			return err
		}
	}
	for _, n := range notes {
		if err := g.put("credit_notes", n.note.ID, n.created, map[string]any{"location_id": lid, "invoice_id": *n.note.InvoiceRef}, n.note); err != nil {
			return err
		}
	}
	return nil
}

// transactions generates money transactions of every type and status.
func (g *gen) transactions(l *demoLocation) error {
	lid, resByID, bookings, orders, events := l.id, l.resByID, l.bookings, l.orders, l.events
	statuses := []wire.TransactionStatus{"succeeded", "pending", "processing", "failed", "canceled"}
	types := []wire.TransactionType{"booking", "order", "eventTicket", "creditPackage", "subscription", "invoice"}
	invoices, err := invoicesOfLocation(g.ctx, g.tx, g.network, lid)
	if err != nil {
		return err
	}
	split := priceSplit
	for i := range 150 * g.scale {
		typ := types[i%len(types)]
		status := statuses[(i/len(types))%len(statuses)]
		mi := g.r.IntN(len(g.memberships))
		created := g.ago(180)
		amount := float64(5+g.r.IntN(300)) + float64(g.r.IntN(100))/100
		tr := wire.Transaction{ID: g.uuid(), Amount: new(amount), CreateDate: ts(created), CurrencyCode: new("EUR"), LocationRef: new(lid),
			MembershipRef: new(g.memberships[mi]), Status: new(status), Type: new(typ), User: &g.users[mi],
			PaymentMethod: &wire.PaymentMethod{Label: new(pick(g, []string{"Visa •••• 4242", "SEPA debit", "Bank transfer"})), Type: new(pick(g, []string{"external", "stripe"}))}}
		switch typ {
		case "booking":
			b := bookings[g.r.IntN(len(bookings))]
			res := resByID[*b.ResourceRef]
			tr.Booking = &wire.TransactionBooking{ID: b.ID, Resource: &wire.Resource{ID: res.ID, Title: res.Title}, Price: split(amount)}
		case "order":
			o := orders[g.r.IntN(len(orders))]
			tr.Order = &wire.TransactionOrder{ID: o.ID, Option: &wire.OptionNameSummary{ID: o.Option.ID, Name: o.Option.Title},
				Product: &wire.Product{ID: o.Product.ID, Title: o.Product.Title}, Price: split(amount)}
		case "eventTicket":
			e := events[g.r.IntN(len(events))]
			tr.Ticket = &wire.TransactionTicket{ID: g.uuid(), CreateDate: ts(created), Price: split(amount),
				Event: &wire.Event{ID: e.ID, Title: e.Title, StartDate: e.StartDate, EndDate: e.EndDate}}
		case "creditPackage":
			tr.CreditPackage = &wire.TransactionCreditPackage{Amount: new(float64(10 * (1 + g.r.IntN(10)))), Price: split(amount)}
		case "subscription":
			pl := g.plans[g.r.IntN(len(g.plans))]
			tr.Plan = &wire.Plan{ID: pl.ID, Title: pl.Title}
			tr.Company = &g.companies[g.r.IntN(len(g.companies))]
		case "invoice":
			inv := invoices[g.r.IntN(len(invoices))]
			tr.Invoice = &wire.Invoice{ID: inv.ID, Title: inv.Title}
			tr.Company = inv.Company
		}
		if status == "canceled" {
			tr.Refund = &wire.Refund{Amount: new(amount), CreateDate: ts(created.Add(24 * time.Hour))}
		}
		if err := g.put("transactions", tr.ID, created, map[string]any{"location_id": lid, "status": string(status), "type": string(typ)}, tr); err != nil {
			return err
		}
	}
	return nil
}

// priceSplit is amount, tax included at taxRate, as net and tax amounts.
func priceSplit(amount float64) *wire.PriceSplit {
	net := round2(amount / (1 + taxRate/100))
	return &wire.PriceSplit{NetAmount: new(net), TaxAmount: new(round2(amount - net))}
}

// feed generates posts with threaded comments.
func (g *gen) feed(lid string) error {
	texts := []string{"Welcome to our new members!", "The coffee machine on floor 2 is fixed.", "Who is up for lunch?", "Reminder: community drinks on Friday.",
		"Lost a blue umbrella in the lobby.", "New phone booths are available for booking."}
	for i := range 8 * g.scale {
		mi := g.r.IntN(len(g.memberships))
		created := g.ago(90)
		p := wire.Post{ID: g.uuid(), CreateDate: ts(created), Liked: new(false), Likes: new(float64(g.r.IntN(30))), Locale: new("en"),
			LocationRef: new(lid), Membership: &wire.PostMembership{ID: g.memberships[mi], User: &g.users[mi]}, MembershipRef: new(g.memberships[mi]),
			Pinned: new(i == 0), Text: new(pick(g, texts)), User: &g.users[mi]}
		if i%3 == 0 {
			key := fmt.Sprintf("feed/%d.jpg", i)
			p.Media = []wire.PostMedia{{ID: g.uuid(), Key: new(key), URL: new(mediaBaseURL + key), Mime: new("image/jpeg"), Width: new(1200.0), Height: new(800.0)}}
		}
		if i%4 == 1 {
			p.Og = json.RawMessage(`{"url":"https://workspace.example/blog","title":"Our blog"}`)
		}
		n := g.r.IntN(7)
		if i == 0 {
			n = 6
		}
		p.Comments = new(float64(n))
		if err := g.put("posts", p.ID, created, map[string]any{"location_id": lid}, p); err != nil {
			return err
		}
		var ids []string
		for k := range n {
			ci := g.r.IntN(len(g.memberships))
			u := g.users[ci]
			c := wire.Comment{ID: g.uuid(), CreateDate: ts(created.Add(time.Duration(k+1) * time.Hour)), Liked: new(false), Likes: new(float64(g.r.IntN(5))),
				Membership: &wire.CommentMembership{ID: g.memberships[ci], User: &wire.CommentUser{ID: u.ID, Blocked: new(false), Name: u.Name, Surname: u.Surname, PhotoURL: u.PhotoURL}},
				PostRef:    new(p.ID), Text: new(pick(g, []string{"Great!", "Count me in", "Thanks for sharing", "+1", "Where exactly?"}))}
			if len(ids) > 0 && (k%2 == 1 || i == 0 && k > 0) {
				c.ParentCommentRef = new(ids[g.r.IntN(len(ids))])
			}
			if k == 5 { // written by a member who has since left
				c.Membership.User.DeleteDate = ts(demoBase.AddDate(0, 0, -2))
			}
			if k == 2 {
				c.Mentions = []wire.CommentMention{{ID: g.users[0].ID, Value: new("@" + *g.users[0].Name)}}
			}
			ids = append(ids, c.ID)
			if err := g.put("comments", c.ID, c.CreateDate.Time, map[string]any{"post_id": p.ID}, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// visitors generates visits and visit requests.
func (g *gen) visitors(loc wire.VisitLocation) error {
	visitor := func() *wire.Visitor {
		fn, ln := pick(g, firstNames), pick(g, lastNames)
		return &wire.Visitor{Name: new(fn), Surname: new(ln), Email: new(asciiEmail(fmt.Sprintf("%s.%s@visitor.example", fn, g.uuid()[:6]))),
			PhoneNumber: new(fmt.Sprintf("+47 555 %04d", g.r.IntN(10000)))}
	}
	for i := range 10 * g.scale {
		mi := g.r.IntN(len(g.memberships))
		created := g.ago(60)
		date := created.Add(time.Duration(24+g.r.IntN(24*10)) * time.Hour)
		v := wire.Visit{ID: g.uuid(), Code: new(fmt.Sprintf("%06d", g.r.IntN(1000000))), Comment: new(pick(g, []string{"Interview", "Client meeting", "Delivery"})),
			CreateDate: ts(created), Date: ts(date), Location: &loc, LocationRef: new(loc.ID), MembershipRefHost: new(g.memberships[mi]),
			UserHost: &g.users[mi], UserRefHost: new(g.users[mi].ID), Visitor: visitor()}
		if i%2 == 0 {
			v.CheckInDate = ts(date.Add(9 * time.Hour))
			v.CheckOutDate = ts(date.Add(12 * time.Hour))
		}
		if i%3 == 1 { // the visitor is a member of the network
			u := g.users[(i*7+3)%len(g.users)]
			v.Visitor = &wire.Visitor{Name: u.Name, Surname: u.Surname, Email: u.Email, PhoneNumber: u.PhoneNumber}
			v.UserRefVisitor = new(u.ID)
		}
		if err := g.put("visits", v.ID, created, map[string]any{"location_id": loc.ID}, v); err != nil {
			return err
		}
	}
	for i := range 6 * g.scale {
		mi := g.r.IntN(len(g.memberships))
		created := g.ago(60)
		vr := wire.VisitRequest{ID: g.uuid(), CreateDate: ts(created), LocationRef: new(loc.ID), MembershipRefHost: new(g.memberships[mi]),
			UserHost: &g.users[mi], UserRefHost: new(g.users[mi].ID), Visitor: visitor()}
		if i%3 == 1 { // the visitor is a member of the network
			u := g.users[(i*5+2)%len(g.users)]
			vr.Visitor = &wire.Visitor{Name: u.Name, Surname: u.Surname, Email: u.Email, PhoneNumber: u.PhoneNumber}
			vr.UserRefVisitor = new(u.ID)
		}
		if err := g.put("visit_requests", vr.ID, created, map[string]any{"location_id": loc.ID}, vr); err != nil {
			return err
		}
	}
	return nil
}

// discounts generates coupons, promocodes and their redemptions.
func (g *gen) discounts() error {
	coupons, err := g.coupons()
	if err != nil {
		return err
	}
	promos, err := g.promocodes(len(coupons))
	if err != nil {
		return err
	}
	for i := range 60 * g.scale {
		if err := g.redemption(i, coupons, promos); err != nil {
			return err
		}
	}
	return nil
}

// coupons generates the network's coupons: by percent and by amount, the
// third for two shop products only.
func (g *gen) coupons() ([]wire.RedemptionCoupon, error) {
	var coupons []wire.RedemptionCoupon
	for i := range 3 * g.scale {
		c := wire.RedemptionCoupon{ID: g.uuid(), CurrencyCode: new("EUR"), EnabledForCredits: new(i%2 == 0),
			Type:              new([]string{"creditPackages", "bookings", "shop"}[i%3]),
			LimitedRedemption: &wire.LimitedRedemption{Enabled: new(i%2 == 1), Usage: new(0.0), Value: new(500.0)},
			LimitedItems:      &wire.LimitedItems{Enabled: new(false)}}
		if i%2 == 0 {
			c.PercentOff = new(float64(10 + 5*i))
		} else {
			c.AmountOff = new(float64(5 * (i + 1)))
		}
		if i%3 == 2 { // a shop coupon for two products only
			c.LimitedItems.Enabled = new(true)
			for _, p := range g.allProducts[:2] {
				c.LimitedItems.Values = append(c.LimitedItems.Values, wire.ItemSummary{ID: p.ID, Title: p.Title})
			}
		}
		coupons = append(coupons, c)
		if err := g.put("coupons", c.ID, demoBase.AddDate(0, -6, i), nil, c); err != nil {
			return nil, err
		}
	}
	return coupons, nil
}

// promo is a promocode and the index of its coupon.
type promo struct {
	p      wire.RedemptionPromocode
	coupon int
}

// promocodes generates the network's promocodes, spread over its coupons
// (nCoupons of them).
func (g *gen) promocodes(nCoupons int) ([]promo, error) {
	var promos []promo
	for i := range 3 * g.scale {
		p := wire.RedemptionPromocode{ID: g.uuid(), Code: new(fmt.Sprintf("WELCOME%02d", i+1)), LimitByFirstPurchase: new(i%2 == 0),
			Expiration:        &wire.PromocodeExpiration{Enabled: new(true), Date: ts(demoBase.AddDate(0, 6, 0))},
			LimitedRedemption: &wire.LimitedRedemption{Enabled: new(false), Usage: new(0.0), Value: new(0.0)}}
		promos = append(promos, promo{p, i % nCoupons})
		if err := g.put("promocodes", p.ID, demoBase.AddDate(0, -5, i), nil, p); err != nil {
			return nil, err
		}
	}
	return promos, nil
}

// redemption generates the ith redemption: of the first coupon for the
// first half, of one drawn after; through one of its promocodes or none.
func (g *gen) redemption(i int, coupons []wire.RedemptionCoupon, promos []promo) error {
	ci := g.r.IntN(len(coupons))
	if i < 30*g.scale {
		ci = 0
	}
	c := coupons[ci]
	*c.LimitedRedemption.Usage++
	var pr *promo
	for k := range promos {
		if promos[k].coupon == ci && g.r.IntN(2) == 0 {
			pr = &promos[k]
			break
		}
	}
	mi := g.r.IntN(len(g.memberships))
	u := g.users[mi]
	created := g.ago(150)
	prod := g.redeemedProduct(i)
	red := wire.Redemption{CreateDate: ts(created), LocationRef: new(g.locations[g.r.IntN(len(g.locations))]), NetworkRef: new(g.network),
		Coupon:   &c,
		Customer: &wire.RedemptionCustomer{ID: u.ID, Title: new(*u.Name + " " + *u.Surname), Type: new(pick(g, []string{"person", "user"})), User: &wire.User{ID: u.ID, Name: u.Name, Surname: u.Surname, PhotoURL: u.PhotoURL}},
		Product:  prod}
	cols := map[string]any{"coupon_id": c.ID}
	if pr != nil {
		p := pr.p
		red.Promocode, red.PromocodeRef = &p, new(p.ID)
		cols["promocode_id"] = p.ID
	}
	return g.put("redemptions", g.uuid(), created, cols, red)
}

// redeemedProduct is what the ith redemption bought: a booking, an order
// or an event ticket in turn, and a few credit packages and subscriptions.
func (g *gen) redeemedProduct(i int) *wire.RedemptionProduct {
	prod := &wire.RedemptionProduct{}
	switch i % 3 {
	case 0:
		b := g.allBookings[g.r.IntN(len(g.allBookings))]
		prod.Type, prod.BookingRef, prod.Title = new("booking"), new(b.ID), b.Title
	case 1:
		o := g.allOrders[g.r.IntN(len(g.allOrders))]
		prod.Type, prod.OrderRef, prod.OptionRef, prod.Title = new("order"), new(o.ID), new(o.Option.ID), o.Product.Title
	case 2:
		e := g.allEvents[g.r.IntN(len(g.allEvents))]
		prod.Type, prod.EventTicketRef, prod.Title = new("eventTicket"), new(g.uuid()), e.Title
	}
	switch i % 12 { // a few of the others: credit packages and subscriptions
	case 10:
		pl := g.plans[i%len(g.plans)]
		*prod = wire.RedemptionProduct{Type: new("subscription"), SubscriptionItemRef: new(g.xuuid()), Title: pl.Title}
	case 11:
		*prod = wire.RedemptionProduct{Type: new("creditPackage"), CreditPackageRef: new(g.xuuid()), Title: new("Credit package")}
	}
	return prod
}

// asciiEmail lowercases an address and folds the accents of the demo names.
func asciiEmail(s string) string {
	return strings.NewReplacer("ü", "ue", "í", "i").Replace(strings.ToLower(s))
}
