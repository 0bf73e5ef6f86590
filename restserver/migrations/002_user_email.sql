-- A user's email as a column, lowercased, so a visitor who is a member of
-- the network is recognised (visit and visit request userRefVisitor).
ALTER TABLE users ADD COLUMN email TEXT;
UPDATE users SET email = lower(json_extract(doc, '$.email'));
CREATE INDEX users_email ON users(network_id, email);
