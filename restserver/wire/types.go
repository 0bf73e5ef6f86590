package wire

// Conventions (the spec's, as the client reads them too):
//   - Every scalar is a pointer (nil = absent), so a zero value is never
//     confused with one left out: new("title"), new(3.5).
//   - Uuids are strings; timestamps are *Timestamp; every JSON number of the
//     spec is float64.
//   - Free objects (metadata, og) are json.RawMessage.
//   - Embedded summaries of other objects (a transaction's booking.resource)
//     use the summary types at the end of this file.

import "encoding/json"

// ---- Shared objects ----

// Tax is a tax line: amount, whether prices include it, rate and taxable base.
type Tax struct {
	Amount        *float64 `json:"amount,omitempty"`
	Inclusive     *bool    `json:"inclusive,omitempty"`
	Rate          *float64 `json:"rate,omitempty"`
	TaxableAmount *float64 `json:"taxableAmount,omitempty"`
}

// User is a person of the network.
type User struct {
	ID          string  `json:"id,omitempty"`
	About       *string `json:"about,omitempty"`
	Email       *string `json:"email,omitempty"`
	Name        *string `json:"name,omitempty"`
	PhoneNumber *string `json:"phoneNumber,omitempty"`
	PhotoURL    *string `json:"photoUrl,omitempty"`
	Surname     *string `json:"surname,omitempty"`
}

// Visitor is a guest who is not a member.
type Visitor struct {
	Email       *string `json:"email,omitempty"`
	Name        *string `json:"name,omitempty"`
	PhoneNumber *string `json:"phoneNumber,omitempty"`
	Surname     *string `json:"surname,omitempty"`
}

// Address is a postal address.
type Address struct {
	City        *string `json:"city,omitempty"`
	CountryCode *string `json:"countryCode,omitempty"`
	Line1       *string `json:"line1,omitempty"`
	Line2       *string `json:"line2,omitempty"`
	PostalCode  *string `json:"postalCode,omitempty"`
	State       *string `json:"state,omitempty"`
}

// Discount is a discount applied to a credit note line or an invoice item.
type Discount struct {
	Coupon         *DiscountCoupon    `json:"coupon,omitempty"`
	Promocode      *DiscountPromocode `json:"promocode,omitempty"`
	SubscriptionID *string            `json:"subscriptionId,omitempty"`
}

// DiscountCoupon is the coupon of a Discount.
type DiscountCoupon struct {
	ID               string   `json:"id,omitempty"`
	AmountOff        *float64 `json:"amountOff,omitempty"`
	CurrencyCode     *string  `json:"currencyCode,omitempty"`
	Duration         *string  `json:"duration,omitempty"`
	DurationInMonths *float64 `json:"durationInMonths,omitempty"`
	PercentOff       *float64 `json:"percentOff,omitempty"`
	Type             *string  `json:"type,omitempty"`
}

// DiscountPromocode is the promocode of a Discount; its expiration is a
// timestamp here (an object in redemptions).
type DiscountPromocode struct {
	ID                   string     `json:"id,omitempty"`
	Code                 *string    `json:"code,omitempty"`
	Expiration           *Timestamp `json:"expiration,omitempty"`
	LimitByFirstPurchase *bool      `json:"limitByFirstPurchase,omitempty"`
}

// ItemPayment is how a booking or an order was paid.
type ItemPayment struct {
	Amount         *float64        `json:"amount,omitempty"`
	CurrencyCode   *string         `json:"currencyCode,omitempty"`
	InvoiceItemRef *string         `json:"invoiceItemRef,omitempty"`
	Status         *string         `json:"status,omitempty"`
	Tax            *ItemPaymentTax `json:"tax,omitempty"`
	TransactionRef *string         `json:"transactionRef,omitempty"`
	Type           *string         `json:"type,omitempty"`
}

// ItemPaymentTax is the tax rule of an ItemPayment.
type ItemPaymentTax struct {
	Inclusive *bool    `json:"inclusive,omitempty"`
	Rate      *float64 `json:"rate,omitempty"`
}

// Company is a customer company.
type Company struct {
	ID              string          `json:"id,omitempty"`
	BillingAddress  *string         `json:"billingAddress,omitempty"`
	BusinessAddress *Address        `json:"businessAddress,omitempty"`
	CreateDate      *Timestamp      `json:"createDate,omitempty"`
	Credits         *CompanyCredits `json:"credits,omitempty"`
	DayPasses       *CompanyDayPass `json:"dayPasses,omitempty"`
	DeleteDate      *Timestamp      `json:"deleteDate,omitempty"`
	LegalName       *string         `json:"legalName,omitempty"`
	LocationRef     *string         `json:"locationRef,omitempty"`
	Metadata        json.RawMessage `json:"metadata,omitempty"`
	Notes           *string         `json:"notes,omitempty"`
	SubscriptionRef *string         `json:"subscriptionRef,omitempty"`
	TaxID           *string         `json:"taxId,omitempty"`
	Title           *string         `json:"title,omitempty"`
}

// CompanyCredits is a company's credit balance.
type CompanyCredits struct {
	Expiring  *float64 `json:"expiring,omitempty"`
	Permanent *float64 `json:"permanent,omitempty"`
}

// CompanyDayPass is a company's day-pass balance.
type CompanyDayPass struct {
	Expiring *float64 `json:"expiring,omitempty"`
}

// PriceSplit splits a price into net and tax.
type PriceSplit struct {
	NetAmount *float64 `json:"netAmount,omitempty"`
	TaxAmount *float64 `json:"taxAmount,omitempty"`
}

// ---- Billing: credit notes ----

// CreditNote is a credit note against an invoice.
type CreditNote struct {
	ID                         string                 `json:"id,omitempty"`
	BaseAmounts                *CreditNoteBaseAmounts `json:"baseAmounts,omitempty"`
	CreateDate                 *Timestamp             `json:"createDate,omitempty"`
	CreditAmount               *float64               `json:"creditAmount,omitempty"`
	CurrencyCode               *string                `json:"currencyCode,omitempty"`
	EffectiveDate              *Timestamp             `json:"effectiveDate,omitempty"`
	InvoiceRef                 *string                `json:"invoiceRef,omitempty"`
	InternalNote               *string                `json:"internalNote,omitempty"`
	Lines                      []CreditNoteLine       `json:"lines,omitempty"`
	LocationRef                *string                `json:"locationRef,omitempty"`
	Memo                       *string                `json:"memo,omitempty"`
	NetworkRef                 *string                `json:"networkRef,omitempty"`
	Number                     *string                `json:"number,omitempty"`
	OutOfBandAmount            *float64               `json:"outOfBandAmount,omitempty"`
	PdfURL                     *string                `json:"pdfUrl,omitempty"`
	PostPaymentAmount          *float64               `json:"postPaymentAmount,omitempty"`
	PrePaymentAmount           *float64               `json:"prePaymentAmount,omitempty"`
	Reason                     *string                `json:"reason,omitempty"`
	Refunds                    []CreditNoteRefund     `json:"refunds,omitempty"`
	Status                     *string                `json:"status,omitempty"`
	SubtotalAmount             *float64               `json:"subtotalAmount,omitempty"`
	SubtotalAmountExcludingTax *float64               `json:"subtotalAmountExcludingTax,omitempty"`
	Taxes                      []Tax                  `json:"taxes,omitempty"`
	Title                      *string                `json:"title,omitempty"`
	TotalAmount                *float64               `json:"totalAmount,omitempty"`
	TotalExcludingTaxAmount    *float64               `json:"totalExcludingTaxAmount,omitempty"`
	Type                       *string                `json:"type,omitempty"`
	UpdateDate                 *Timestamp             `json:"updateDate,omitempty"`
	VoidDate                   *Timestamp             `json:"voidDate,omitempty"`
}

// CreditNoteBaseAmounts are a credit note's amounts in the base currency.
type CreditNoteBaseAmounts struct {
	CurrencyCode               *string  `json:"currencyCode,omitempty"`
	PostPaymentAmount          *float64 `json:"postPaymentAmount,omitempty"`
	PrePaymentAmount           *float64 `json:"prePaymentAmount,omitempty"`
	SubtotalAmount             *float64 `json:"subtotalAmount,omitempty"`
	SubtotalAmountExcludingTax *float64 `json:"subtotalAmountExcludingTax,omitempty"`
	Taxes                      []Tax    `json:"taxes,omitempty"`
	TotalAmount                *float64 `json:"totalAmount,omitempty"`
	TotalExcludingTaxAmount    *float64 `json:"totalExcludingTaxAmount,omitempty"`
}

// LineBaseAmounts are a credit note line's or invoice item's amounts in the
// base currency.
type LineBaseAmounts struct {
	CurrencyCode            *string  `json:"currencyCode,omitempty"`
	DiscountedAmount        *float64 `json:"discountedAmount,omitempty"`
	Tax                     *Tax     `json:"tax,omitempty"`
	TotalAmount             *float64 `json:"totalAmount,omitempty"`
	TotalExcludingTaxAmount *float64 `json:"totalExcludingTaxAmount,omitempty"`
	UnitAmount              *float64 `json:"unitAmount,omitempty"`
	UnitExcludingTaxAmount  *float64 `json:"unitExcludingTaxAmount,omitempty"`
}

// CreditNoteLine is one credited invoice item.
type CreditNoteLine struct {
	ID                      string           `json:"id,omitempty"`
	BaseAmounts             *LineBaseAmounts `json:"baseAmounts,omitempty"`
	CreateDate              *Timestamp       `json:"createDate,omitempty"`
	CurrencyCode            *string          `json:"currencyCode,omitempty"`
	DiscountedAmount        *float64         `json:"discountedAmount,omitempty"`
	Discounts               []Discount       `json:"discounts,omitempty"`
	InvoiceItemRef          *string          `json:"invoiceItemRef,omitempty"`
	InvoiceRef              *string          `json:"invoiceRef,omitempty"`
	LocationRef             *string          `json:"locationRef,omitempty"`
	Memo                    *string          `json:"memo,omitempty"`
	NetworkRef              *string          `json:"networkRef,omitempty"`
	Quantity                *float64         `json:"quantity,omitempty"`
	Tax                     *Tax             `json:"tax,omitempty"`
	TotalAmount             *float64         `json:"totalAmount,omitempty"`
	TotalExcludingTaxAmount *float64         `json:"totalExcludingTaxAmount,omitempty"`
	UnitAmount              *float64         `json:"unitAmount,omitempty"`
	UnitExcludingTaxAmount  *float64         `json:"unitExcludingTaxAmount,omitempty"`
	UpdateDate              *Timestamp       `json:"updateDate,omitempty"`
}

// CreditNoteRefund is money refunded with a credit note.
type CreditNoteRefund struct {
	ID             string                  `json:"id,omitempty"`
	Amount         *float64                `json:"amount,omitempty"`
	CurrencyCode   *string                 `json:"currencyCode,omitempty"`
	Method         *CreditNoteRefundMethod `json:"method,omitempty"`
	TransactionRef *string                 `json:"transactionRef,omitempty"`
}

// CreditNoteRefundMethod is how a refund was paid out.
type CreditNoteRefundMethod struct {
	Label *string `json:"label,omitempty"`
	Type  *string `json:"type,omitempty"`
}

// ---- Resources and bookings ----

// Booking is a reservation of a resource.
type Booking struct {
	ID                 string            `json:"id,omitempty"`
	Attendees          []BookingAttendee `json:"attendees,omitempty"`
	CreateDate         *Timestamp        `json:"createDate,omitempty"`
	DeleteDate         *Timestamp        `json:"deleteDate,omitempty"`
	EndDate            *Timestamp        `json:"endDate,omitempty"`
	Memo               *string           `json:"memo,omitempty"`
	MembershipRefOwner *string           `json:"membershipRefOwner,omitempty"`
	Payment            *ItemPayment      `json:"payment,omitempty"`
	ResourceRef        *string           `json:"resourceRef,omitempty"`
	Seats              *float64          `json:"seats,omitempty"`
	StartDate          *Timestamp        `json:"startDate,omitempty"`
	Title              *string           `json:"title,omitempty"`
	UpdateDate         *Timestamp        `json:"updateDate,omitempty"`
	UserOwner          *User             `json:"userOwner,omitempty"`
}

// BookingAttendee is a person attending a booking.
type BookingAttendee struct {
	MembershipRef *string `json:"membershipRef,omitempty"`
	User          *User   `json:"user,omitempty"`
}

// Resource is a bookable resource (desk, room, ...).
type Resource struct {
	ID                          string                     `json:"id,omitempty"`
	LocationRef                 *string                    `json:"locationRef,omitempty"`
	NetworkRef                  *string                    `json:"networkRef,omitempty"`
	ParentRef                   *string                    `json:"parentRef,omitempty"`
	Title                       *string                    `json:"title,omitempty"`
	Description                 *string                    `json:"description,omitempty"`
	Locale                      *string                    `json:"locale,omitempty"`
	ImageURL                    *string                    `json:"imageUrl,omitempty"`
	CreateDate                  *Timestamp                 `json:"createDate,omitempty"`
	Image                       *ResourceImage             `json:"image,omitempty"`
	Type                        *string                    `json:"type,omitempty"`
	Visibility                  *string                    `json:"visibility,omitempty"`
	BookingPermission           *string                    `json:"bookingPermission,omitempty"`
	Capacity                    *float64                   `json:"capacity,omitempty"`
	BookingStepMinutes          *float64                   `json:"bookingStepMinutes,omitempty"`
	DayPassesEnabled            *bool                      `json:"dayPassesEnabled,omitempty"`
	PreparationMinutes          *string                    `json:"preparationMinutes,omitempty"`
	RefundThreshold             *string                    `json:"refundThreshold,omitempty"`
	AutoRelease                 *ResourceAutoRelease       `json:"autoRelease,omitempty"`
	CheckIn                     *ResourceCheckIn           `json:"checkIn,omitempty"`
	ConfirmationEmail           *ResourceConfirmationEmail `json:"confirmationEmail,omitempty"`
	Credits                     *ResourcePricing           `json:"credits,omitempty"`
	Money                       *ResourcePricing           `json:"money,omitempty"`
	DynamicPricing              *ResourceDynamicPricing    `json:"dynamicPricing,omitempty"`
	Duration                    *ResourceDuration          `json:"duration,omitempty"`
	ExternalCalendar            *ResourceExternalCalendar  `json:"externalCalendar,omitempty"`
	AccessVendor1GroupRef       *string                    `json:"accessVendor1GroupRef,omitempty"`
	AccessVendor2GroupRef       *string                    `json:"accessVendor2GroupRef,omitempty"`
	AccessVendor3GroupRef       *float64                   `json:"accessVendor3GroupRef,omitempty"`
	AccessVendor4AccessGroupRef *string                    `json:"accessVendor4AccessGroupRef,omitempty"`
	AccessVendor5GroupRef       *string                    `json:"accessVendor5GroupRef,omitempty"`
	Plans                       *ResourcePlans             `json:"plans,omitempty"`
	Schedule                    *ResourceSchedule          `json:"schedule,omitempty"`
}

// ResourceImage is the stored image of a resource.
type ResourceImage struct {
	Key *string `json:"key,omitempty"`
}

// ResourceAutoRelease releases unattended bookings.
type ResourceAutoRelease struct {
	Enabled  *bool   `json:"enabled,omitempty"`
	Interval *string `json:"interval,omitempty"`
}

// ResourceCheckIn is a resource's check-in rule.
type ResourceCheckIn struct {
	Interval *string `json:"interval,omitempty"`
}

// ResourceConfirmationEmail says when booking confirmations are mailed.
type ResourceConfirmationEmail struct {
	BookingCreatedByAdmin         *bool   `json:"bookingCreatedByAdmin,omitempty"`
	BookingCreatedByMember        *bool   `json:"bookingCreatedByMember,omitempty"`
	BookingCreatedByNetworkMember *bool   `json:"bookingCreatedByNetworkMember,omitempty"`
	BookingCreatedByPublic        *bool   `json:"bookingCreatedByPublic,omitempty"`
	Template                      *string `json:"template,omitempty"`
}

// ResourcePricing is a resource's price in credits or money.
type ResourcePricing struct {
	Enabled *bool         `json:"enabled,omitempty"`
	Price   *float64      `json:"price,omitempty"`
	Tiers   []PricingTier `json:"tiers,omitempty"`
}

// PricingTier is one volume tier of a price.
type PricingTier struct {
	FlatAmount *float64 `json:"flatAmount,omitempty"`
	From       *float64 `json:"from,omitempty"`
	UnitAmount *float64 `json:"unitAmount,omitempty"`
	UpTo       *float64 `json:"upTo,omitempty"`
}

// ResourceDynamicPricing adjusts prices by demand.
type ResourceDynamicPricing struct {
	DeltaAbove *float64 `json:"deltaAbove,omitempty"`
	DeltaBelow *float64 `json:"deltaBelow,omitempty"`
	Enabled    *bool    `json:"enabled,omitempty"`
}

// ResourceDuration bounds a booking's length in minutes.
type ResourceDuration struct {
	Max    *float64                `json:"max,omitempty"`
	Min    *float64                `json:"min,omitempty"`
	Public *ResourcePublicDuration `json:"public,omitempty"`
}

// ResourcePublicDuration bounds public bookings' length in minutes.
type ResourcePublicDuration struct {
	Enabled *bool    `json:"enabled,omitempty"`
	Max     *float64 `json:"max,omitempty"`
	Min     *float64 `json:"min,omitempty"`
}

// ResourceExternalCalendar links a resource to an external calendar.
type ResourceExternalCalendar struct {
	ID                *string `json:"id,omitempty"`
	TwoWaySyncEnabled *bool   `json:"twoWaySyncEnabled,omitempty"`
}

// ResourcePlans lists the plans that include a resource.
type ResourcePlans struct {
	Enabled *bool      `json:"enabled,omitempty"`
	Tiers   []PlanTier `json:"tiers,omitempty"`
}

// PlanTier is one plan offering of a resource.
type PlanTier struct {
	ID                   string             `json:"id,omitempty"`
	Entire               *bool              `json:"entire,omitempty"`
	Plan                 *Plan              `json:"plan,omitempty"`
	CommitmentCycles     *float64           `json:"commitmentCycles,omitempty"`
	Credits              *float64           `json:"credits,omitempty"`
	DayPasses            *float64           `json:"dayPasses,omitempty"`
	Description          *string            `json:"description,omitempty"`
	Discounts            *PlanTierDiscounts `json:"discounts,omitempty"`
	PrintVendor1GroupRef *string            `json:"printVendor1GroupRef,omitempty"`
	Period               *string            `json:"period,omitempty"`
	Price                *float64           `json:"price,omitempty"`
	SelfSignupType       *string            `json:"selfSignupType,omitempty"`
	SetupFee             *float64           `json:"setupFee,omitempty"`
	Title                *string            `json:"title,omitempty"`
}

// Plan is a membership plan.
type Plan struct {
	ID               string   `json:"id,omitempty"`
	CommitmentCycles *float64 `json:"commitmentCycles,omitempty"`
	Credits          *float64 `json:"credits,omitempty"`
	DayPasses        *float64 `json:"dayPasses,omitempty"`
	Period           *string  `json:"period,omitempty"`
	Price            *float64 `json:"price,omitempty"`
	Title            *string  `json:"title,omitempty"`
}

// PlanTierDiscounts are a plan tier's discount percentages per product family.
type PlanTierDiscounts struct {
	CreditPackages *float64 `json:"creditPackages,omitempty"`
	Desks          *float64 `json:"desks,omitempty"`
	Equipment      *float64 `json:"equipment,omitempty"`
	Events         *float64 `json:"events,omitempty"`
	Rooms          *float64 `json:"rooms,omitempty"`
	Shop           *float64 `json:"shop,omitempty"`
}

// ResourceSchedule is a resource's opening schedule.
type ResourceSchedule struct {
	Default *ScheduleDefault `json:"default,omitempty"`
	Enabled *bool            `json:"enabled,omitempty"`
	Public  *SchedulePublic  `json:"public,omitempty"`
}

// ScheduleDefault is the schedule for members.
type ScheduleDefault struct {
	ClosedDays []string       `json:"closedDays,omitempty"`
	Items      []ScheduleItem `json:"items,omitempty"`
}

// SchedulePublic is the schedule for the public.
type SchedulePublic struct {
	ClosedDays []string       `json:"closedDays,omitempty"`
	Enabled    *bool          `json:"enabled,omitempty"`
	Items      []ScheduleItem `json:"items,omitempty"`
}

// ScheduleItem is a set of week days with opening hours.
type ScheduleItem struct {
	Days  *ScheduleDays  `json:"days,omitempty"`
	Hours *ScheduleHours `json:"hours,omitempty"`
}

// ScheduleDays marks the days a ScheduleItem applies to.
type ScheduleDays struct {
	Monday    *bool `json:"monday,omitempty"`
	Tuesday   *bool `json:"tuesday,omitempty"`
	Wednesday *bool `json:"wednesday,omitempty"`
	Thursday  *bool `json:"thursday,omitempty"`
	Friday    *bool `json:"friday,omitempty"`
	Saturday  *bool `json:"saturday,omitempty"`
	Sunday    *bool `json:"sunday,omitempty"`
}

// ScheduleHours are opening hours ("09:00" to "18:00").
type ScheduleHours struct {
	From *string `json:"from,omitempty"`
	To   *string `json:"to,omitempty"`
}

// ---- Visitors ----

// Visit is a guest's visit to a location.
type Visit struct {
	ID                string         `json:"id,omitempty"`
	Code              *string        `json:"code,omitempty"`
	Comment           *string        `json:"comment,omitempty"`
	CheckInDate       *Timestamp     `json:"checkInDate,omitempty"`
	CheckOutDate      *Timestamp     `json:"checkOutDate,omitempty"`
	CreateDate        *Timestamp     `json:"createDate,omitempty"`
	Date              *Timestamp     `json:"date,omitempty"`
	Location          *VisitLocation `json:"location,omitempty"`
	LocationRef       *string        `json:"locationRef,omitempty"`
	MembershipRefHost *string        `json:"membershipRefHost,omitempty"`
	UserHost          *User          `json:"userHost,omitempty"`
	UserRefHost       *string        `json:"userRefHost,omitempty"`
	UserRefVisitor    *string        `json:"userRefVisitor,omitempty"`
	Visitor           *Visitor       `json:"visitor,omitempty"`
}

// VisitLocation is the location summary embedded in a visit.
type VisitLocation struct {
	ID         string  `json:"id,omitempty"`
	Address    *string `json:"address,omitempty"`
	TimezoneID *string `json:"timezoneId,omitempty"`
	Title      *string `json:"title,omitempty"`
}

// VisitRequest is a request to admit a visitor.
type VisitRequest struct {
	ID                string     `json:"id,omitempty"`
	CreateDate        *Timestamp `json:"createDate,omitempty"`
	LocationRef       *string    `json:"locationRef,omitempty"`
	MembershipRefHost *string    `json:"membershipRefHost,omitempty"`
	UserHost          *User      `json:"userHost,omitempty"`
	UserRefHost       *string    `json:"userRefHost,omitempty"`
	UserRefVisitor    *string    `json:"userRefVisitor,omitempty"`
	Visitor           *Visitor   `json:"visitor,omitempty"`
}

// ---- Feed ----

// Post is a community feed post.
type Post struct {
	ID            string          `json:"id,omitempty"`
	Comments      *float64        `json:"comments,omitempty"` // number of comments
	CreateDate    *Timestamp      `json:"createDate,omitempty"`
	Liked         *bool           `json:"liked,omitempty"`
	Likes         *float64        `json:"likes,omitempty"`
	Locale        *string         `json:"locale,omitempty"`
	LocationRef   *string         `json:"locationRef,omitempty"`
	Media         []PostMedia     `json:"media,omitempty"`
	Membership    *PostMembership `json:"membership,omitempty"`
	MembershipRef *string         `json:"membershipRef,omitempty"`
	Og            json.RawMessage `json:"og,omitempty"`
	Pinned        *bool           `json:"pinned,omitempty"`
	Text          *string         `json:"text,omitempty"`
	User          *User           `json:"user,omitempty"`
}

// PostMedia is an image or video attached to a post.
type PostMedia struct {
	ID     string   `json:"id,omitempty"`
	Height *float64 `json:"height,omitempty"`
	Key    *string  `json:"key,omitempty"`
	Mime   *string  `json:"mime,omitempty"`
	URL    *string  `json:"url,omitempty"`
	Width  *float64 `json:"width,omitempty"`
}

// PostMembership is the author's membership on a post.
type PostMembership struct {
	ID   string `json:"id,omitempty"`
	User *User  `json:"user,omitempty"`
}

// Comment is a comment on a feed post; replies point at their parent.
type Comment struct {
	ID               string             `json:"id,omitempty"`
	CreateDate       *Timestamp         `json:"createDate,omitempty"`
	Liked            *bool              `json:"liked,omitempty"`
	Likes            *float64           `json:"likes,omitempty"`
	Membership       *CommentMembership `json:"membership,omitempty"`
	Mentions         []CommentMention   `json:"mentions,omitempty"`
	ParentCommentRef *string            `json:"parentCommentRef,omitempty"`
	PostRef          *string            `json:"postRef,omitempty"`
	Text             *string            `json:"text,omitempty"`
}

// CommentMembership is the author's membership on a comment.
type CommentMembership struct {
	ID   string       `json:"id,omitempty"`
	User *CommentUser `json:"user,omitempty"`
}

// CommentUser is the author of a comment.
type CommentUser struct {
	ID         string     `json:"id,omitempty"`
	Blocked    *bool      `json:"blocked,omitempty"`
	DeleteDate *Timestamp `json:"deleteDate,omitempty"`
	Name       *string    `json:"name,omitempty"`
	PhotoURL   *string    `json:"photoUrl,omitempty"`
	Surname    *string    `json:"surname,omitempty"`
}

// CommentMention is a user mentioned in a comment.
type CommentMention struct {
	ID    string  `json:"id,omitempty"`
	Value *string `json:"value,omitempty"`
}

// ---- Billing: invoices ----

// Invoice is a bill to a customer.
type Invoice struct {
	ID                           string              `json:"id,omitempty"`
	Number                       *string             `json:"number,omitempty"`
	Title                        *string             `json:"title,omitempty"`
	Status                       *string             `json:"status,omitempty"`
	CreateDate                   *Timestamp          `json:"createDate,omitempty"`
	IssueDate                    *Timestamp          `json:"issueDate,omitempty"`
	DueDate                      *Timestamp          `json:"dueDate,omitempty"`
	AutoCreateDate               *Timestamp          `json:"autoCreateDate,omitempty"`
	VoidDate                     *Timestamp          `json:"voidDate,omitempty"`
	DueDays                      *float64            `json:"dueDays,omitempty"`
	DueType                      *string             `json:"dueType,omitempty"`
	Amount                       *float64            `json:"amount,omitempty"`
	AmountDue                    *float64            `json:"amountDue,omitempty"`
	AmountPaid                   *float64            `json:"amountPaid,omitempty"`
	AmountRemaining              *float64            `json:"amountRemaining,omitempty"`
	AppliedBalance               *float64            `json:"appliedBalance,omitempty"`
	StartingBalance              *float64            `json:"startingBalance,omitempty"`
	SubtotalAmount               *float64            `json:"subtotalAmount,omitempty"`
	SubtotalExcludingTaxAmount   *float64            `json:"subtotalExcludingTaxAmount,omitempty"`
	TotalAmount                  *float64            `json:"totalAmount,omitempty"`
	TotalExcludingTaxAmount      *float64            `json:"totalExcludingTaxAmount,omitempty"`
	PostPaymentCreditNotesAmount *float64            `json:"postPaymentCreditNotesAmount,omitempty"`
	PrePaymentCreditNotesAmount  *float64            `json:"prePaymentCreditNotesAmount,omitempty"`
	PostPaymentCreditAmount      *float64            `json:"postPaymentCreditAmount,omitempty"`
	PrePaymentCreditAmount       *float64            `json:"prePaymentCreditAmount,omitempty"`
	Taxes                        []Tax               `json:"taxes,omitempty"`
	CurrencyCode                 *string             `json:"currencyCode,omitempty"`
	BaseAmounts                  *InvoiceBaseAmounts `json:"baseAmounts,omitempty"`
	CompanyRef                   *string             `json:"companyRef,omitempty"`
	LocationRef                  *string             `json:"locationRef,omitempty"`
	MembershipRef                *string             `json:"membershipRef,omitempty"`
	SubscriptionRef              *string             `json:"subscriptionRef,omitempty"`
	Company                      *Company            `json:"company,omitempty"`
	Customer                     *InvoiceCustomer    `json:"customer,omitempty"`
	CustomerAddress              *Address            `json:"customerAddress,omitempty"`
	CustomerName                 *string             `json:"customerName,omitempty"`
	CustomerTaxID                *string             `json:"customerTaxId,omitempty"`
	Memo                         *string             `json:"memo,omitempty"`
	PdfURL                       *string             `json:"pdfUrl,omitempty"`
	ReceiptPdfURL                *string             `json:"receiptPdfUrl,omitempty"`
	TimezoneID                   *string             `json:"timezoneId,omitempty"`
	ItemsCount                   *float64            `json:"itemsCount,omitempty"`
	Items                        []InvoiceItem       `json:"items,omitempty"`
	Payments                     []InvoicePayment    `json:"payments,omitempty"`
	Transaction                  *InvoiceTransaction `json:"transaction,omitempty"`
	User                         *User               `json:"user,omitempty"`
}

// InvoiceBaseAmounts are an invoice's amounts in the base currency.
type InvoiceBaseAmounts struct {
	AmountDue                    *float64 `json:"amountDue,omitempty"`
	AppliedBalance               *float64 `json:"appliedBalance,omitempty"`
	CurrencyCode                 *string  `json:"currencyCode,omitempty"`
	PostPaymentCreditNotesAmount *float64 `json:"postPaymentCreditNotesAmount,omitempty"`
	PrePaymentCreditNotesAmount  *float64 `json:"prePaymentCreditNotesAmount,omitempty"`
	SubtotalAmount               *float64 `json:"subtotalAmount,omitempty"`
	SubtotalExcludingTaxAmount   *float64 `json:"subtotalExcludingTaxAmount,omitempty"`
	Taxes                        []Tax    `json:"taxes,omitempty"`
	TotalAmount                  *float64 `json:"totalAmount,omitempty"`
	TotalExcludingTaxAmount      *float64 `json:"totalExcludingTaxAmount,omitempty"`
}

// InvoiceCustomer is who an invoice is billed to.
type InvoiceCustomer struct {
	ID    string  `json:"id,omitempty"`
	Title *string `json:"title,omitempty"`
	Type  *string `json:"type,omitempty"`
	User  *User   `json:"user,omitempty"` // embedded {id, name, photoUrl, surname}
}

// InvoicePayment is a payment towards an invoice.
type InvoicePayment struct {
	CreateDate     *Timestamp             `json:"createDate,omitempty"`
	Method         *InvoicePaymentMethod  `json:"method,omitempty"`
	Price          *InvoicePaymentPrice   `json:"price,omitempty"`
	Refundable     *bool                  `json:"refundable,omitempty"`
	Refunds        *InvoicePaymentRefunds `json:"refunds,omitempty"`
	Status         *string                `json:"status,omitempty"`
	TransactionRef *string                `json:"transactionRef,omitempty"`
}

// InvoicePaymentMethod is how an invoice payment was made.
type InvoicePaymentMethod struct {
	PaymentGateway *PaymentGateway `json:"paymentGateway,omitempty"`
	Type           *string         `json:"type,omitempty"`
}

// PaymentGateway names the gateway that took a payment.
type PaymentGateway struct {
	Gateway *string `json:"gateway,omitempty"`
	Label   *string `json:"label,omitempty"`
}

// InvoicePaymentPrice is the amount of an invoice payment.
type InvoicePaymentPrice struct {
	Money *Money  `json:"money,omitempty"`
	Type  *string `json:"type,omitempty"`
}

// Money is a gross amount in a currency.
type Money struct {
	CurrencyCode *string  `json:"currencyCode,omitempty"`
	GrossAmount  *float64 `json:"grossAmount,omitempty"`
}

// InvoicePaymentRefunds are the refunds of an invoice payment.
type InvoicePaymentRefunds struct {
	Money []MoneyRefund `json:"money,omitempty"`
	Type  *string       `json:"type,omitempty"`
}

// MoneyRefund is one refund of an invoice payment.
type MoneyRefund struct {
	ID           string     `json:"id,omitempty"`
	CreateDate   *Timestamp `json:"createDate,omitempty"`
	CurrencyCode *string    `json:"currencyCode,omitempty"`
	GrossAmount  *float64   `json:"grossAmount,omitempty"`
}

// InvoiceTransaction is the money transaction that paid an invoice.
type InvoiceTransaction struct {
	ID            string              `json:"id,omitempty"`
	Amount        *float64            `json:"amount,omitempty"`
	CreateDate    *Timestamp          `json:"createDate,omitempty"`
	PaymentMethod *PaymentMethod      `json:"paymentMethod,omitempty"`
	Status        *string             `json:"status,omitempty"`
	Refund        *Refund             `json:"refund,omitempty"`
	Refunds       []TransactionRefund `json:"refunds,omitempty"`
}

// PaymentMethod labels a payment method.
type PaymentMethod struct {
	Label *string `json:"label,omitempty"`
	Type  *string `json:"type,omitempty"`
}

// Refund is a refunded amount.
type Refund struct {
	Amount     *float64   `json:"amount,omitempty"`
	CreateDate *Timestamp `json:"createDate,omitempty"`
}

// TransactionRefund is one refund of an invoice transaction.
type TransactionRefund struct {
	ID           string     `json:"id,omitempty"`
	Amount       *float64   `json:"amount,omitempty"`
	CreateDate   *Timestamp `json:"createDate,omitempty"`
	CurrencyCode *string    `json:"currencyCode,omitempty"`
}

// InvoiceItem is one line of an invoice.
type InvoiceItem struct {
	ID                      string               `json:"id,omitempty"`
	InvoiceRef              *string              `json:"invoiceRef,omitempty"`
	CompanyRef              *string              `json:"companyRef,omitempty"`
	LocationRef             *string              `json:"locationRef,omitempty"`
	MembershipRef           *string              `json:"membershipRef,omitempty"`
	MembershipRefCreatedBy  *string              `json:"membershipRefCreatedBy,omitempty"`
	SubscriptionRef         *string              `json:"subscriptionRef,omitempty"`
	CreateDate              *Timestamp           `json:"createDate,omitempty"`
	DeleteDate              *Timestamp           `json:"deleteDate,omitempty"`
	BaseAmounts             *LineBaseAmounts     `json:"baseAmounts,omitempty"`
	Discounts               []Discount           `json:"discounts,omitempty"`
	Period                  *Period              `json:"period,omitempty"`
	Product                 *InvoiceItemProduct  `json:"product,omitempty"`
	Quantity                *float64             `json:"quantity,omitempty"`
	UserCreatedBy           *User                `json:"userCreatedBy,omitempty"` // embedded {id, name, surname}
	Amount                  *float64             `json:"amount,omitempty"`
	DiscountedAmount        *float64             `json:"discountedAmount,omitempty"`
	NetUnitAmount           *float64             `json:"netUnitAmount,omitempty"`
	TotalAmount             *float64             `json:"totalAmount,omitempty"`
	TotalExcludingTaxAmount *float64             `json:"totalExcludingTaxAmount,omitempty"`
	UnitAmount              *float64             `json:"unitAmount,omitempty"`
	UnitExcludingTaxAmount  *float64             `json:"unitExcludingTaxAmount,omitempty"`
	Tax                     *Tax                 `json:"tax,omitempty"`
	CurrencyCode            *string              `json:"currencyCode,omitempty"`
	Description             *string              `json:"description,omitempty"`
	Type                    *string              `json:"type,omitempty"`
	Booking                 *InvoiceItemBooking  `json:"booking,omitempty"`
	CreditPackage           *CreditPackageAmount `json:"creditPackage,omitempty"`
	Order                   *InvoiceItemOrder    `json:"order,omitempty"`
	Plan                    *InvoiceItemPlan     `json:"plan,omitempty"`
	Ticket                  *InvoiceItemTicket   `json:"ticket,omitempty"`
}

// Period is a date range.
type Period struct {
	EndDate   *Timestamp `json:"endDate,omitempty"`
	StartDate *Timestamp `json:"startDate,omitempty"`
}

// InvoiceItemProduct says what an invoice item sells, by reference.
type InvoiceItemProduct struct {
	BookingRef     *string `json:"bookingRef,omitempty"`
	EventTicketRef *string `json:"eventTicketRef,omitempty"`
	OptionRef      *string `json:"optionRef,omitempty"`
	OrderRef       *string `json:"orderRef,omitempty"`
	Title          *string `json:"title,omitempty"`
	Type           *string `json:"type,omitempty"`
}

// InvoiceItemBooking is the booking an invoice item bills.
type InvoiceItemBooking struct {
	ID        string     `json:"id,omitempty"`
	EndDate   *Timestamp `json:"endDate,omitempty"`
	Resource  *Resource  `json:"resource,omitempty"` // embedded {id, title, type}
	StartDate *Timestamp `json:"startDate,omitempty"`
}

// CreditPackageAmount is the credits bought with a credit package.
type CreditPackageAmount struct {
	Amount *float64 `json:"amount,omitempty"`
}

// InvoiceItemOrder is the shop order an invoice item bills.
type InvoiceItemOrder struct {
	CreateDate    *Timestamp     `json:"createDate,omitempty"`
	Product       *Product       `json:"product,omitempty"`       // embedded {id, title}
	ProductOption *ProductOption `json:"productOption,omitempty"` // embedded {id, title}
	Quantity      *float64       `json:"quantity,omitempty"`
}

// InvoiceItemPlan is the plan period an invoice item bills.
type InvoiceItemPlan struct {
	ID        string     `json:"id,omitempty"`
	EndDate   *Timestamp `json:"endDate,omitempty"`
	StartDate *Timestamp `json:"startDate,omitempty"`
	Title     *string    `json:"title,omitempty"`
}

// InvoiceItemTicket is the event ticket an invoice item bills.
type InvoiceItemTicket struct {
	CreateDate *Timestamp `json:"createDate,omitempty"`
	Event      *Event     `json:"event,omitempty"` // embedded {endDate, id, startDate, title}
}

// ---- Transactions ----

// Transaction is a money transaction.
type Transaction struct {
	ID            string                    `json:"id,omitempty"`
	Amount        *float64                  `json:"amount,omitempty"`
	CreateDate    *Timestamp                `json:"createDate,omitempty"`
	CurrencyCode  *string                   `json:"currencyCode,omitempty"`
	LocationRef   *string                   `json:"locationRef,omitempty"`
	MembershipRef *string                   `json:"membershipRef,omitempty"`
	Status        *TransactionStatus        `json:"status,omitempty"`
	Type          *TransactionType          `json:"type,omitempty"`
	PaymentMethod *PaymentMethod            `json:"paymentMethod,omitempty"`
	Booking       *TransactionBooking       `json:"booking,omitempty"`
	Company       *Company                  `json:"company,omitempty"`
	CreditPackage *TransactionCreditPackage `json:"creditPackage,omitempty"`
	Invoice       *Invoice                  `json:"invoice,omitempty"` // embedded {id, title}
	Order         *TransactionOrder         `json:"order,omitempty"`
	Plan          *Plan                     `json:"plan,omitempty"` // embedded {id, title}
	Refund        *Refund                   `json:"refund,omitempty"`
	Ticket        *TransactionTicket        `json:"ticket,omitempty"`
	User          *User                     `json:"user,omitempty"`
}

// TransactionBooking is the booking a transaction paid for.
type TransactionBooking struct {
	ID       string      `json:"id,omitempty"`
	Resource *Resource   `json:"resource,omitempty"` // embedded {id, title}
	Price    *PriceSplit `json:"price,omitempty"`
}

// TransactionCreditPackage is the credit package a transaction bought.
type TransactionCreditPackage struct {
	Amount *float64    `json:"amount,omitempty"`
	Price  *PriceSplit `json:"price,omitempty"`
}

// TransactionOrder is the shop order a transaction paid for.
type TransactionOrder struct {
	ID      string             `json:"id,omitempty"`
	Option  *OptionNameSummary `json:"option,omitempty"` // {id, name}
	Price   *PriceSplit        `json:"price,omitempty"`
	Product *Product           `json:"product,omitempty"` // embedded {id, title}
}

// TransactionTicket is the event ticket a transaction paid for.
type TransactionTicket struct {
	ID         string      `json:"id,omitempty"`
	CreateDate *Timestamp  `json:"createDate,omitempty"`
	Event      *Event      `json:"event,omitempty"` // embedded {endDate, id, startDate, title}
	Price      *PriceSplit `json:"price,omitempty"`
}

// TransactionStatus is a money transaction's status; the spec lists every value.
type TransactionStatus string

// TransactionType is what a money transaction paid for; the spec lists every value.
type TransactionType string

// Transaction status and type values.
const (
	TransactionStatusCanceled   TransactionStatus = "canceled"
	TransactionStatusFailed     TransactionStatus = "failed"
	TransactionStatusPending    TransactionStatus = "pending"
	TransactionStatusProcessing TransactionStatus = "processing"
	TransactionStatusSucceeded  TransactionStatus = "succeeded"

	TransactionTypeBooking       TransactionType = "booking"
	TransactionTypeCreditPackage TransactionType = "creditPackage"
	TransactionTypeEventTicket   TransactionType = "eventTicket"
	TransactionTypeInvoice       TransactionType = "invoice"
	TransactionTypeOrder         TransactionType = "order"
	TransactionTypeSubscription  TransactionType = "subscription"
)

// ---- Shop ----

// Product is a shop product with its purchasable options.
type Product struct {
	ID           string           `json:"id,omitempty"`
	CategoryRef  *string          `json:"categoryRef,omitempty"`
	LocationRef  *string          `json:"locationRef,omitempty"`
	CreateDate   *Timestamp       `json:"createDate,omitempty"`
	UpdateDate   *Timestamp       `json:"updateDate,omitempty"`
	Description  *string          `json:"description,omitempty"`
	ImageURL     *string          `json:"imageUrl,omitempty"`
	RefundPolicy *string          `json:"refundPolicy,omitempty"`
	Title        *string          `json:"title,omitempty"`
	Visibility   *string          `json:"visibility,omitempty"`
	Featured     *bool            `json:"featured,omitempty"`
	Media        []Media          `json:"media,omitempty"`
	Options      []ProductOption  `json:"options,omitempty"`
	Order        *ProductOrdering `json:"order,omitempty"`
}

// Media is a stored file with its public URL.
type Media struct {
	Key *string `json:"key,omitempty"`
	URL *string `json:"url,omitempty"`
}

// ProductOption is one purchasable variant of a product.
type ProductOption struct {
	ID          string              `json:"id,omitempty"`
	Available   *bool               `json:"available,omitempty"`
	CreateDate  *Timestamp          `json:"createDate,omitempty"`
	CustomTax   *CustomTax          `json:"customTax,omitempty"`
	Description *string             `json:"description,omitempty"`
	Price       *ProductOptionPrice `json:"price,omitempty"`
	Stock       *Stock              `json:"stock,omitempty"`
	Title       *string             `json:"title,omitempty"`
}

// CustomTax overrides the tax rate of a product option.
type CustomTax struct {
	Enabled *bool    `json:"enabled,omitempty"`
	Rate    *float64 `json:"rate,omitempty"`
}

// ProductOptionPrice is an option's price in credits and money.
type ProductOptionPrice struct {
	Credits *CreditsPrice `json:"credits,omitempty"`
	Money   *MoneyPrice   `json:"money,omitempty"`
}

// CreditsPrice is a price in credits.
type CreditsPrice struct {
	Amount  *float64 `json:"amount,omitempty"`
	Enabled *bool    `json:"enabled,omitempty"`
}

// MoneyPrice is a price in money.
type MoneyPrice struct {
	Amount       *float64 `json:"amount,omitempty"`
	CurrencyCode *string  `json:"currencyCode,omitempty"`
	Enabled      *bool    `json:"enabled,omitempty"`
}

// Stock is an option's stock keeping.
type Stock struct {
	Enabled  *bool    `json:"enabled,omitempty"`
	Quantity *float64 `json:"quantity,omitempty"`
}

// ProductOrdering says whether and how a product can be ordered.
type ProductOrdering struct {
	ConfirmationEmail *OrderConfirmationEmail `json:"confirmationEmail,omitempty"`
	Enabled           *bool                   `json:"enabled,omitempty"`
}

// OrderConfirmationEmail configures the order confirmation mail.
type OrderConfirmationEmail struct {
	Enabled  *bool   `json:"enabled,omitempty"`
	Template *string `json:"template,omitempty"`
}

// Order is a shop order.
type Order struct {
	ID            string         `json:"id,omitempty"`
	LocationRef   *string        `json:"locationRef,omitempty"`
	MembershipRef *string        `json:"membershipRef,omitempty"`
	Number        *float64       `json:"number,omitempty"`
	Comment       *string        `json:"comment,omitempty"`
	CreateDate    *Timestamp     `json:"createDate,omitempty"`
	DeleteDate    *Timestamp     `json:"deleteDate,omitempty"`
	Option        *ProductOption `json:"option,omitempty"` // embedded {id, title}
	Payment       *ItemPayment   `json:"payment,omitempty"`
	Product       *Product       `json:"product,omitempty"` // embedded {createDate, description, id, media, title}
	Quantity      *float64       `json:"quantity,omitempty"`
	Status        *OrderStatus   `json:"status,omitempty"`
	User          *User          `json:"user,omitempty"`
}

// OrderStatus is a shop order's status; the spec lists every value.
type OrderStatus string

// Order status values.
const (
	OrderStatusNew        OrderStatus = "new"
	OrderStatusInProgress OrderStatus = "inProgress"
	OrderStatusCompleted  OrderStatus = "completed"
	OrderStatusCanceled   OrderStatus = "canceled"
)

// ---- Discounts ----

// Redemption is one use of a coupon or promocode.
type Redemption struct {
	CreateDate   *Timestamp           `json:"createDate,omitempty"`
	LocationRef  *string              `json:"locationRef,omitempty"`
	NetworkRef   *string              `json:"networkRef,omitempty"`
	PromocodeRef *string              `json:"promocodeRef,omitempty"`
	Coupon       *RedemptionCoupon    `json:"coupon,omitempty"`
	Customer     *RedemptionCustomer  `json:"customer,omitempty"`
	Product      *RedemptionProduct   `json:"product,omitempty"`
	Promocode    *RedemptionPromocode `json:"promocode,omitempty"`
}

// RedemptionCoupon is the coupon redeemed.
type RedemptionCoupon struct {
	ID                string             `json:"id,omitempty"`
	AmountOff         *float64           `json:"amountOff,omitempty"`
	CurrencyCode      *string            `json:"currencyCode,omitempty"`
	EnabledForCredits *bool              `json:"enabledForCredits,omitempty"`
	LimitedItems      *LimitedItems      `json:"limitedItems,omitempty"`
	LimitedRedemption *LimitedRedemption `json:"limitedRedemption,omitempty"`
	PercentOff        *float64           `json:"percentOff,omitempty"`
	Type              *string            `json:"type,omitempty"`
}

// LimitedItems restricts a coupon to some items.
type LimitedItems struct {
	Enabled *bool         `json:"enabled,omitempty"`
	Values  []ItemSummary `json:"values,omitempty"`
}

// ItemSummary is an {id, title} pair.
type ItemSummary struct {
	ID    string  `json:"id,omitempty"`
	Title *string `json:"title,omitempty"`
}

// LimitedRedemption caps how often a coupon or promocode can be used.
type LimitedRedemption struct {
	Enabled *bool    `json:"enabled,omitempty"`
	Usage   *float64 `json:"usage,omitempty"`
	Value   *float64 `json:"value,omitempty"`
}

// RedemptionCustomer is who redeemed; its id is a plain string.
type RedemptionCustomer struct {
	ID    string  `json:"id,omitempty"`
	Title *string `json:"title,omitempty"`
	Type  *string `json:"type,omitempty"`
	User  *User   `json:"user,omitempty"` // embedded {id, name, photoUrl, surname}
}

// RedemptionProduct says what the discount was applied to, by reference.
type RedemptionProduct struct {
	BookingRef          *string `json:"bookingRef,omitempty"`
	CreditPackageRef    *string `json:"creditPackageRef,omitempty"`
	EventTicketRef      *string `json:"eventTicketRef,omitempty"`
	OptionRef           *string `json:"optionRef,omitempty"`
	OrderRef            *string `json:"orderRef,omitempty"`
	SubscriptionItemRef *string `json:"subscriptionItemRef,omitempty"`
	Title               *string `json:"title,omitempty"`
	Type                *string `json:"type,omitempty"`
}

// RedemptionPromocode is the promocode redeemed; its expiration is an object.
type RedemptionPromocode struct {
	ID                   string               `json:"id,omitempty"`
	Code                 *string              `json:"code,omitempty"`
	Expiration           *PromocodeExpiration `json:"expiration,omitempty"`
	LimitByFirstPurchase *bool                `json:"limitByFirstPurchase,omitempty"`
	LimitedRedemption    *LimitedRedemption   `json:"limitedRedemption,omitempty"`
}

// PromocodeExpiration is when a promocode expires, if it does.
type PromocodeExpiration struct {
	Date    *Timestamp `json:"date,omitempty"`
	Enabled *bool      `json:"enabled,omitempty"`
}

// ---- Events ----

// Event is an event people can attend.
type Event struct {
	ID               string            `json:"id,omitempty"`
	LocationRef      *string           `json:"locationRef,omitempty"`
	NetworkRef       *string           `json:"networkRef,omitempty"`
	Title            *string           `json:"title,omitempty"`
	Description      *string           `json:"description,omitempty"`
	ImageURL         *string           `json:"imageUrl,omitempty"`
	Venue            *string           `json:"venue,omitempty"`
	CreateDate       *Timestamp        `json:"createDate,omitempty"`
	StartDate        *Timestamp        `json:"startDate,omitempty"`
	EndDate          *Timestamp        `json:"endDate,omitempty"`
	ApplicationType  *string           `json:"applicationType,omitempty"`
	VisibilityType   *string           `json:"visibilityType,omitempty"`
	RefundThreshold  *string           `json:"refundThreshold,omitempty"`
	ShowAttendees    *bool             `json:"showAttendees,omitempty"`
	LimitedAttendees *LimitedAttendees `json:"limitedAttendees,omitempty"`
	Price            *EventPrice       `json:"price,omitempty"`
}

// LimitedAttendees caps an event's attendance.
type LimitedAttendees struct {
	Enabled *bool    `json:"enabled,omitempty"`
	Limit   *float64 `json:"limit,omitempty"`
}

// EventPrice is an event's price in credits and money.
type EventPrice struct {
	Credits *CreditsPrice    `json:"credits,omitempty"`
	Money   *EventMoneyPrice `json:"money,omitempty"`
}

// EventMoneyPrice is an event's price in money.
type EventMoneyPrice struct {
	Amount  *float64 `json:"amount,omitempty"`
	Enabled *bool    `json:"enabled,omitempty"`
}

// ---- Embedded summaries without a full object of the same shape ----

// OptionNameSummary is a product option as embedded in a transaction: {id, name}
// (a ProductOption calls the name "title").
type OptionNameSummary struct {
	ID   string  `json:"id,omitempty"`
	Name *string `json:"name,omitempty"`
}
