// Package queries holds, once, the GraphQL queries more than one place sends:
// those the documentation shows (First in README.md, Dashboard and Invoice in
// docs/querying.md, Entities in docs/federation.md: every query block of the documentation must equal one of
// them, graph's TestReadmeExamplesHoldOnEveryRun; graph's TestReadmeQueries
// keeps them working at one upstream call per distinct thing they need; the
// soak run and the benchmark send them) and the benchmark's dashboard.
package queries

// First: a resource with its parent and its location's id.
// Upstream: GET /resources/v1/{id} for the resource, and once more for its
// parent when it has one; location is free.
const First = `query FirstQuery($id: ID!) {
  resource(id: $id) {
    id
    title
    type
    capacity
    location { id }
    parent { id title type capacity }
  }
}`

// Dashboard: a location's products, its recent orders with their
// product and option, its recent transactions with their booking's resource
// (capacity is not embedded, so resources are loaded), their order's product
// and their ticket's event, and its credit notes with their invoice.
// Upstream: one call per list, one GET /resources/v1/{id} per distinct
// resource, one GET /events/v1/{id} per distinct event, one invoice call per
// distinct invoice; products and options come from the one product list.
const Dashboard = `query Dashboard($locationId: ID!) {
  location(id: $locationId) {
    id
    products { id title options { id title } }
    orders(first: 10) {
      nodes {
        id number status createDate
        product { id title visibility }
        option { id title price { money { amount currencyCode } } }
      }
    }
    transactions(first: 50) {
      nodes {
        id type status amount createDate
        booking { resource { id title capacity } }
        order { product { id title description } }
        ticket { event { id title venue } }
      }
      pageInfo { hasNextPage endCursor }
    }
    creditNotes(first: 10) {
      nodes { id number totalAmount invoice { id number status amountDue } }
    }
  }
}`

// DeferredDashboard: Dashboard with its transactions (and their links) and
// its credit notes (and their invoices) deferred (@defer): the first
// payload has the location, its products and orders; the two parts follow
// (docs/incremental-delivery.md). Upstream: the same calls as Dashboard.
const DeferredDashboard = `query DeferredDashboard($locationId: ID!) {
  location(id: $locationId) {
    id
    products { id title options { id title } }
    orders(first: 10) {
      nodes {
        id number status createDate
        product { id title visibility }
        option { id title price { money { amount currencyCode } } }
      }
    }
    ... @defer(label: "transactions") {
      transactions(first: 50) {
        nodes {
          id type status amount createDate
          booking { resource { id title capacity } }
          order { product { id title description } }
          ticket { event { id title venue } }
        }
        pageInfo { hasNextPage endCursor }
      }
    }
    ...CreditNotes @defer(label: "creditNotes")
  }
}

fragment CreditNotes on Location {
  creditNotes(first: 10) {
    nodes { id number totalAmount invoice { id number status amountDue } }
  }
}`

// DeferredLinks: Dashboard with each transaction's links (its booking's
// resource, its order's product, its ticket's event) deferred inside the
// list (@defer in each node), and its credit notes deferred: the first
// payload has the location, its products and orders, and its transactions
// without their links; a part per transaction with its links follows, and
// the credit notes (docs/incremental-delivery.md). Upstream: the same calls
// as Dashboard, three of them for the first payload (the product, order and
// transaction lists).
const DeferredLinks = `query DeferredLinks($locationId: ID!) {
  location(id: $locationId) {
    id
    products { id title options { id title } }
    orders(first: 10) {
      nodes {
        id number status createDate
        product { id title visibility }
        option { id title price { money { amount currencyCode } } }
      }
    }
    transactions(first: 50) {
      nodes {
        id type status amount createDate
        ... @defer(label: "links") {
          booking { resource { id title capacity } }
          order { product { id title description } }
          ticket { event { id title venue } }
        }
      }
      pageInfo { hasNextPage endCursor }
    }
    ...CreditNotes @defer(label: "creditNotes")
  }
}

fragment CreditNotes on Location {
  creditNotes(first: 10) {
    nodes { id number totalAmount invoice { id number status amountDue } }
  }
}`

// Invoice: an invoice with its items, the resources of its
// bookings, and its credit notes with their lines and the invoice items they
// credit. Upstream: one invoice call (it also answers every invoiceItem), one
// GET /resources/v1/{id} per distinct resource, one credit notes list.
const Invoice = `query InvoiceDetail($id: ID!) {
  invoice(id: $id) {
    id number status totalAmount currencyCode customerName
    items {
      id description totalAmount
      booking { startDate endDate resource { id title capacity } }
    }
    creditNotes(first: 10) {
      nodes {
        id number reason totalAmount
        lines { id totalAmount invoiceItem { id description totalAmount } }
      }
    }
  }
}`

// Entities: what a Federation router sends to resolve resources and
// locations by key (docs/federation.md). Upstream: one GET /resources/v1/{id}
// per distinct resource among the representations; locations are free.
const Entities = `query Entities($representations: [_Any!]!) {
  _entities(representations: $representations) {
    __typename
    ... on Resource { id title capacity }
    ... on Location { id }
  }
}`

// BenchDashboard: the benchmark suite's location dashboard (go run ./bench,
// graph's BenchmarkNestedQuery): four lists and every kind of nested link
// (resource, product via the location's list, event, invoice).
const BenchDashboard = `query Dashboard($l: ID!) { location(id: $l) {
  id
  products { id title description visibility options { id title } }
  orders(first: 10) { nodes { id number status locationRef product { id title visibility } } }
  transactions(first: 20) { nodes { id amount status type locationRef
    booking { id resource { id title capacity type } }
    order { id product { id title visibility } }
    ticket { id event { id title venue } } } }
  creditNotes(first: 10) { nodes { id number totalAmount invoice { id number status totalAmount } } }
} }`
