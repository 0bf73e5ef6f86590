-- Initial schema. Every record belongs to a network; create_date is unix
-- microseconds; the list order is (create_date DESC, rowid DESC). doc holds the
-- restclient wire object as JSON.

CREATE TABLE settings (
	key   TEXT PRIMARY KEY,
	value BLOB NOT NULL
);

CREATE TABLE networks (
	id          TEXT PRIMARY KEY,
	name        TEXT NOT NULL,
	create_date INTEGER NOT NULL
);

CREATE TABLE api_clients (
	id            TEXT PRIMARY KEY,
	network_id    TEXT NOT NULL REFERENCES networks(id),
	secret_hash   BLOB NOT NULL,
	scopes        TEXT NOT NULL,
	membership_id TEXT NOT NULL,
	create_date   INTEGER NOT NULL
);
CREATE INDEX api_clients_network ON api_clients(network_id);

CREATE TABLE tokens (
	hash          BLOB PRIMARY KEY,
	kind          TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
	network_id    TEXT NOT NULL REFERENCES networks(id),
	client_id     TEXT,
	membership_id TEXT NOT NULL,
	scopes        TEXT NOT NULL,
	expires_at    INTEGER NOT NULL,
	renew         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tokens_network ON tokens(network_id);
CREATE INDEX tokens_renew ON tokens(renew) WHERE renew = 1;

CREATE TABLE locations (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX locations_network ON locations(network_id, create_date);

CREATE TABLE users (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX users_network ON users(network_id, create_date);

CREATE TABLE memberships (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	user_id     TEXT NOT NULL REFERENCES users(id),
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX memberships_user ON memberships(network_id, user_id);

CREATE TABLE resources (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	location_id TEXT NOT NULL,
	parent_id   TEXT,
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX resources_location ON resources(network_id, location_id, create_date);
CREATE INDEX resources_parent ON resources(network_id, parent_id);

CREATE TABLE bookings (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	location_id TEXT NOT NULL,
	resource_id TEXT NOT NULL REFERENCES resources(id),
	start_date  INTEGER NOT NULL,
	end_date    INTEGER NOT NULL,
	seats       INTEGER NOT NULL,
	deleted     INTEGER NOT NULL DEFAULT 0,
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX bookings_resource_time ON bookings(network_id, resource_id, start_date, end_date);
CREATE INDEX bookings_location ON bookings(network_id, location_id, create_date);

CREATE TABLE invoices (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	location_id TEXT NOT NULL,
	status      TEXT NOT NULL,
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX invoices_location ON invoices(network_id, location_id, create_date);

CREATE TABLE invoice_items (
	id                TEXT PRIMARY KEY,
	network_id        TEXT NOT NULL REFERENCES networks(id),
	invoice_id        TEXT NOT NULL REFERENCES invoices(id),
	location_id       TEXT NOT NULL,
	position          INTEGER NOT NULL,
	credited_quantity REAL NOT NULL DEFAULT 0,
	credited_amount   REAL NOT NULL DEFAULT 0,
	create_date       INTEGER NOT NULL,
	doc               TEXT NOT NULL
);
CREATE INDEX invoice_items_invoice ON invoice_items(network_id, invoice_id, position);

CREATE TABLE credit_notes (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	location_id TEXT NOT NULL,
	invoice_id  TEXT NOT NULL REFERENCES invoices(id),
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX credit_notes_invoice ON credit_notes(network_id, invoice_id, create_date);
CREATE INDEX credit_notes_location ON credit_notes(network_id, location_id, create_date);

CREATE TABLE transactions (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	location_id TEXT NOT NULL,
	status      TEXT NOT NULL,
	type        TEXT NOT NULL,
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX transactions_location ON transactions(network_id, location_id, create_date);
CREATE INDEX transactions_status ON transactions(network_id, location_id, status, create_date);
CREATE INDEX transactions_type ON transactions(network_id, location_id, type, create_date);

CREATE TABLE products (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	location_id TEXT NOT NULL,
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX products_location ON products(network_id, location_id, create_date);

CREATE TABLE orders (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	location_id TEXT NOT NULL,
	status      TEXT NOT NULL,
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX orders_location ON orders(network_id, location_id, create_date);
CREATE INDEX orders_status ON orders(network_id, location_id, status, create_date);

CREATE TABLE coupons (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX coupons_network ON coupons(network_id, create_date);

CREATE TABLE promocodes (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX promocodes_network ON promocodes(network_id, create_date);

CREATE TABLE redemptions (
	id           TEXT PRIMARY KEY,
	network_id   TEXT NOT NULL REFERENCES networks(id),
	coupon_id    TEXT,
	promocode_id TEXT,
	create_date  INTEGER NOT NULL,
	doc          TEXT NOT NULL
);
CREATE INDEX redemptions_coupon ON redemptions(network_id, coupon_id, create_date);
CREATE INDEX redemptions_promocode ON redemptions(network_id, promocode_id, create_date);

CREATE TABLE events (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	location_id TEXT NOT NULL,
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX events_location ON events(network_id, location_id, create_date);

CREATE TABLE posts (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	location_id TEXT NOT NULL,
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX posts_location ON posts(network_id, location_id, create_date);

CREATE TABLE comments (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	post_id     TEXT NOT NULL REFERENCES posts(id),
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX comments_post ON comments(network_id, post_id, create_date);

CREATE TABLE visits (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	location_id TEXT NOT NULL,
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX visits_location ON visits(network_id, location_id, create_date);

CREATE TABLE visit_requests (
	id          TEXT PRIMARY KEY,
	network_id  TEXT NOT NULL REFERENCES networks(id),
	location_id TEXT NOT NULL,
	create_date INTEGER NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX visit_requests_location ON visit_requests(network_id, location_id, create_date);
