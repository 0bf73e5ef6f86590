// Package floor is the HTTP floor of the bench's two workloads beside
// which the facade is measured under load: the single resource by id and
// the 25 orders with their products. A Floor answers exactly those two
// queries with no GraphQL at all, the cheapest way the same answer can be
// made on the same stack: it reads the POST body (encoding/json), makes the
// upstream exchanges the data needs with the caller's credentials (the
// resource's GET /resources/v1/{id}; the orders' GET /shop/orders/v1, then
// the location's GET /shop/products/v1, the calls the facade makes) through
// net/http's transport, its idle connections sized as restclient's, and
// writes the answer (encoding/json), byte for byte the facade's, on
// net/http's server as the facade.
//
// Its CPU per request under the bench's load is what an HTTP server, those
// upstream exchanges and the JSON on both sides cost by themselves: the part
// of the facade's figure that no change to the facade's own code can remove.
// The bench runs it in a process of its own beside the facade and reports
// facade ÷ floor (bench/loadcpu.go). It is a measuring instrument, not a
// facade: it checks nothing, and a product missing from its location's list
// is null (the facade would fetch it by id).
package floor

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The queries a Floor answers: bench/queries.go's resourceQuery and
// ordersQuery, byte for byte (any other text is refused, so a change there
// shows as the floor's errors in the bench, and fails the bench's test).
const (
	ResourceQuery = `query Resource($id: ID!) { resource(id: $id) { id title type capacity } }`
	OrdersQuery   = `query Orders($l: ID!) { orders(locationId: $l, status: COMPLETED, first: 25) {
  nodes { id number status locationRef
    product { id title description visibility featured options { id title price { money { amount currencyCode } } } } }
} }`
)

// Floor answers ResourceQuery and OrdersQuery from the REST service at its
// base URL.
type Floor struct {
	rt   http.RoundTripper
	base string
}

// New returns the floor of the REST service at upstream (an http URL).
func New(upstream string) (*Floor, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, errors.New("floor: want the upstream's http URL")
	}
	tr := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64, IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: 10 * time.Second}
	return &Floor{rt: tr, base: upstream}, nil
}

// request is the GraphQL request's body, as far as the floor reads it.
type request struct {
	Query     string            `json:"query"`
	Variables map[string]string `json:"variables"`
}

// resource is the resource query's selection.
type resource struct {
	ID       string  `json:"id"`
	Title    *string `json:"title"`
	Type     *string `json:"type"`
	Capacity *int    `json:"capacity"`
}

// order is an order of the upstream's list and of the answer: the orders
// query's selection, product aside.
type order struct {
	ID          string   `json:"id"`
	Number      *float64 `json:"number"`
	Status      *string  `json:"status"`
	LocationRef *string  `json:"locationRef"`
}

// orderIn is an order as the upstream lists it: the embedded product's id.
type orderIn struct {
	order
	Product *struct {
		ID string `json:"id"`
	} `json:"product"`
}

// orderOut is an order of the answer.
type orderOut struct {
	order
	Product *product `json:"product"`
}

// product is a product of the location's list and of the answer: the
// orders query's selection.
type product struct {
	ID          string   `json:"id"`
	Title       *string  `json:"title"`
	Description *string  `json:"description"`
	Visibility  *string  `json:"visibility"`
	Featured    *bool    `json:"featured"`
	Options     []option `json:"options"`
}

type option struct {
	ID    string  `json:"id"`
	Title *string `json:"title"`
	Price *struct {
		Money *struct {
			Amount       *float64 `json:"amount"`
			CurrencyCode *string  `json:"currencyCode"`
		} `json:"money"`
	} `json:"price"`
}

// statuses are the GraphQL names of the upstream's order statuses; another
// value is null.
var statuses = map[string]string{"new": "NEW", "inProgress": "IN_PROGRESS", "completed": "COMPLETED", "canceled": "CANCELED"}

// errAnswer is an answer the floor cannot make: the status and message of
// its error response.
type errAnswer struct {
	status int
	msg    string
}

func (e *errAnswer) Error() string { return e.msg }

// answer returns the data of the GraphQL request in body, fetched with auth
// and networkID.
func (f *Floor) answer(body []byte, auth, networkID string) (any, error) {
	var in request
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, &errAnswer{http.StatusBadRequest, "want the resource or the orders query"}
	}
	switch in.Query {
	case ResourceQuery:
		id := in.Variables["id"]
		if id == "" {
			return nil, &errAnswer{http.StatusBadRequest, "want $id"}
		}
		var got struct {
			Resource resource `json:"resource"`
		}
		if err := f.get("/resources/v1/"+url.PathEscape(id), auth, networkID, &got); err != nil {
			return nil, err
		}
		return map[string]any{"resource": got.Resource}, nil
	case OrdersQuery:
		l := in.Variables["l"]
		if l == "" {
			return nil, &errAnswer{http.StatusBadRequest, "want $l"}
		}
		var orders struct {
			Orders []orderIn `json:"orders"`
		}
		q := url.Values{"locationRef": {l}, "status": {"completed"}, "limit": {"25"}}
		if err := f.get("/shop/orders/v1?"+q.Encode(), auth, networkID, &orders); err != nil {
			return nil, err
		}
		// The product lists of the orders' locations, one call each.
		lists := map[string]map[string]*product{}
		nodes := make([]orderOut, len(orders.Orders))
		for i, o := range orders.Orders {
			nodes[i].order = o.order
			if o.Status != nil {
				if s, ok := statuses[*o.Status]; ok {
					nodes[i].Status = &s
				} else {
					nodes[i].Status = nil
				}
			}
			if o.Product == nil || o.LocationRef == nil {
				continue
			}
			byID, ok := lists[*o.LocationRef]
			if !ok {
				var ps struct {
					Products []*product `json:"products"`
				}
				if err := f.get("/shop/products/v1?"+url.Values{"locationRef": {*o.LocationRef}}.Encode(), auth, networkID, &ps); err != nil {
					return nil, err
				}
				byID = make(map[string]*product, len(ps.Products))
				for _, p := range ps.Products {
					byID[p.ID] = p
				}
				lists[*o.LocationRef] = byID
			}
			nodes[i].Product = byID[o.Product.ID]
		}
		return map[string]any{"orders": map[string]any{"nodes": nodes}}, nil
	}
	return nil, &errAnswer{http.StatusBadRequest, "want the resource or the orders query"}
}

// get makes the upstream GET of pathQuery with the caller's credentials and
// decodes its 200 answer into v.
func (f *Floor) get(pathQuery, auth, networkID string, v any) error {
	req, err := http.NewRequest(http.MethodGet, f.base+pathQuery, nil)
	if err != nil {
		return &errAnswer{http.StatusBadRequest, "bad argument"}
	}
	req.Header["Accept"] = []string{"application/json"}
	req.Header["Authorization"] = []string{auth}
	if networkID != "" {
		req.Header["Service-Network-Id"] = []string{networkID}
	}
	resp, err := f.rt.RoundTrip(req)
	if err != nil {
		return &errAnswer{http.StatusBadGateway, "upstream: " + err.Error()}
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return &errAnswer{http.StatusBadGateway, "upstream: " + resp.Status}
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &errAnswer{http.StatusBadGateway, "upstream body: " + err.Error()}
	}
	return nil
}

// ServeHTTP answers a POST to /graphql.
func (f *Floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Method == http.MethodPost && r.URL.Path == "/graphql" {
		body, _ = io.ReadAll(r.Body)
	}
	var out bytes.Buffer
	status := http.StatusOK
	data, err := f.answer(body, r.Header.Get("Authorization"), r.Header.Get("Service-Network-Id"))
	if err == nil {
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false) // as gqlgen writes strings
		err = enc.Encode(map[string]any{"data": data})
		out.Truncate(max(out.Len()-1, 0)) // the encoder's newline
	}
	if err != nil {
		var e *errAnswer
		if !errors.As(err, &e) {
			e = &errAnswer{http.StatusInternalServerError, err.Error()}
		}
		status = e.status
		out.Reset()
		msg, _ := json.Marshal(e.msg)
		out.WriteString(`{"errors":[{"message":` + string(msg) + `}]}`)
	}
	w.Header()["Content-Type"] = []string{"application/json; charset=utf-8"}
	w.Header()["Content-Length"] = []string{strconv.Itoa(out.Len())}
	w.WriteHeader(status)
	_, _ = w.Write(out.Bytes())
}
