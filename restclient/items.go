package restclient

// DecodeItems decodes {"items": [...]} into a new []*T with T's generated
// decoders, the one way this package reads JSON: for values this program
// encoded itself and kept elsewhere (internal/policy/live shares what a poll
// fetched between replicas). T must be an operation's object (Order,
// Transaction, Visit, ...): DecodeItems panics for a type without
// generated decoders.
func DecodeItems[T any](data []byte) ([]*T, error) {
	v, _, err := parseList[T]("items")(data)
	if err != nil {
		return nil, err
	}
	return v.([]*T), nil
}
