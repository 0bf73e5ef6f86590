package wire

// Request bodies of the create and update operations. Every field is a pointer
// or a slice, so "absent" is never confused with a zero the caller meant
// (an amount of 0, a false boolean, an empty comment). The client wraps each
// body under its single key ({"creditNote": ...}); the types hold the inner
// object.

// CreditNoteCreateRequest is the body of POST /billing/credit_notes/v1.
// Required: InvoiceRef, Reason, Lines (each with InvoiceItemRef). The public
// reference calls the note InternalNote and the spec Memo; both are accepted.
type CreditNoteCreateRequest struct {
	InvoiceRef      *string                   `json:"invoiceRef,omitempty"`
	Reason          *string                   `json:"reason,omitempty"`
	Lines           []CreditNoteLineRequest   `json:"lines,omitempty"`
	CreditAmount    *float64                  `json:"creditAmount,omitempty"`
	EffectiveDate   *Timestamp                `json:"effectiveDate,omitempty"`
	Memo            *string                   `json:"memo,omitempty"`
	InternalNote    *string                   `json:"internalNote,omitempty"`
	OutOfBandAmount *float64                  `json:"outOfBandAmount,omitempty"`
	Refunds         []CreditNoteRefundRequest `json:"refunds,omitempty"`
}

// CreditNoteLineRequest credits one invoice item by quantity or amount.
type CreditNoteLineRequest struct {
	InvoiceItemRef *string  `json:"invoiceItemRef,omitempty"`
	Amount         *float64 `json:"amount,omitempty"`
	Quantity       *float64 `json:"quantity,omitempty"`
}

// CreditNoteRefundRequest refunds money against a transaction.
type CreditNoteRefundRequest struct {
	Amount         *float64 `json:"amount,omitempty"`
	ID             *string  `json:"id,omitempty"`
	TransactionRef *string  `json:"transactionRef,omitempty"`
}

// BookingCreateRequest is the body of POST /resources/bookings/v1.
// Required: ResourceRef, StartDate, EndDate; MembershipRefOwner defaults to
// the caller's membership.
type BookingCreateRequest struct {
	ResourceRef        *string    `json:"resourceRef,omitempty"`
	StartDate          *Timestamp `json:"startDate,omitempty"`
	EndDate            *Timestamp `json:"endDate,omitempty"`
	Memo               *string    `json:"memo,omitempty"`
	Title              *string    `json:"title,omitempty"`
	MembershipRefOwner *string    `json:"membershipRefOwner,omitempty"`
}

// VisitCreateRequest is the body of POST /visitors/visits/v1.
// Required: Date, LocationRef, Visitor.Email, Visitor.Name.
type VisitCreateRequest struct {
	Date        *Timestamp `json:"date,omitempty"`
	LocationRef *string    `json:"locationRef,omitempty"`
	Visitor     *Visitor   `json:"visitor,omitempty"`
	Comment     *string    `json:"comment,omitempty"`
}

// VisitUpdateRequest is the body of PUT /visitors/visits/v1/{id}.
// Required: Date; a nil Comment leaves the comment unchanged.
type VisitUpdateRequest struct {
	Date    *Timestamp `json:"date,omitempty"`
	Comment *string    `json:"comment,omitempty"`
}

// VisitRequestCreateRequest is the body of POST /visitors/requests/v1.
// Required: LocationRef, UserRefHost, Visitor.Email, Visitor.Name.
type VisitRequestCreateRequest struct {
	LocationRef *string  `json:"locationRef,omitempty"`
	UserRefHost *string  `json:"userRefHost,omitempty"`
	Visitor     *Visitor `json:"visitor,omitempty"`
}

// PostCreateRequest is the body of POST /feed/posts/v1. Required: LocationRef.
type PostCreateRequest struct {
	LocationRef *string      `json:"locationRef,omitempty"`
	Text        *string      `json:"text,omitempty"`
	Media       []MediaInput `json:"media,omitempty"`
	Og          *PostOG      `json:"og,omitempty"`
}

// PostUpdateRequest is the body of PUT /feed/posts/v1/{id}. Nil fields are
// left unchanged; a non-nil empty Media clears the media.
type PostUpdateRequest struct {
	Text  *string      `json:"text,omitempty"`
	Media []MediaInput `json:"media,omitzero"`
	Og    *PostOG      `json:"og,omitempty"`
}

// MediaInput attaches a stored file by key.
type MediaInput struct {
	Key *string `json:"key,omitempty"`
}

// PostOG is a link preview (Open Graph); URL is required when it is sent.
type PostOG struct {
	URL         *string `json:"url,omitempty"`
	Title       *string `json:"title,omitempty"`
	Description *string `json:"description,omitempty"`
	Image       *string `json:"image,omitempty"`
	Type        *string `json:"type,omitempty"`
	VideoURL    *string `json:"videoUrl,omitempty"`
}
