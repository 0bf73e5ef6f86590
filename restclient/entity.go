package restclient

// IsEntity marks the types the GraphQL facade serves as Federation entities
// (the @key types of its schema): gqlgen's federation runtime binds them to
// its Entity interface, which asks for this method. It does nothing.
func (Resource) IsEntity()     {}
func (Event) IsEntity()        {}
func (Visit) IsEntity()        {}
func (Product) IsEntity()      {}
func (Invoice) IsEntity()      {}
func (Booking) IsEntity()      {}
func (Order) IsEntity()        {}
func (CreditNote) IsEntity()   {}
func (Transaction) IsEntity()  {}
func (Post) IsEntity()         {}
func (Comment) IsEntity()      {}
func (VisitRequest) IsEntity() {}
