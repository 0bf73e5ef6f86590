// Runs the GET set-ups of real clients that docs/graphql-over-http.md shows (and Apollo's persisted
// queries by GET) against the endpoint, as
// clients_test.go asks: node clients.mjs <endpoint> <authorization>
// <service-network-id> <resource id>. Prints one JSON object on stdout, per
// case {method, data, error: {name, message, code}} where method is the
// HTTP method the client sent (seen by a wrapping fetch) and code the first
// GraphQL error's extensions.code the client surfaced.
import { ApolloClient, HttpLink, InMemoryCache, gql } from "@apollo/client";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { GraphQLClient } from "graphql-request";
import { createHash } from "node:crypto";

const [url, authorization, networkId, resourceId] = process.argv.slice(2);
const headers = { authorization, "service-network-id": networkId };
const query = `query Resource($id: ID!) { resource(id: $id) { id title } }`;

// recording returns a fetch that remembers the method of each request.
function recording() {
  const seen = [];
  const f = (input, init = {}) => {
    seen.push(init.method || (input instanceof Request ? input.method : "GET"));
    return fetch(input, init);
  };
  return { fetch: f, seen };
}

function describe(err) {
  if (!err) return undefined;
  const errors = err.errors || err.response?.errors || [];
  return { name: err.name, message: String(err.message).slice(0, 300), code: errors[0]?.extensions?.code };
}

async function apollo(doc, variables) {
  const rec = recording();
  const client = new ApolloClient({
    link: new HttpLink({ uri: url, useGETForQueries: true, headers, fetch: rec.fetch }),
    cache: new InMemoryCache(),
  });
  try {
    const r = await client.query({ query: gql(doc), variables, fetchPolicy: "no-cache" });
    return { method: rec.seen.join(","), data: r.data, error: describe(r.error) };
  } catch (err) {
    return { method: rec.seen.join(","), error: describe(err) };
  }
}

// apolloPersisted runs one query twice through Apollo's persisted-query link
// with hashed GETs: a miss answered PERSISTED_QUERY_NOT_FOUND (400 in
// application/graphql-response+json), the retry with the query, then a hit.
async function apolloPersisted() {
  const rec = recording();
  const sha256 = (s) => createHash("sha256").update(s).digest("hex");
  const client = new ApolloClient({
    link: new PersistedQueryLink({ sha256, useGETForHashedQueries: true }).concat(new HttpLink({ uri: url, headers, fetch: rec.fetch })),
    cache: new InMemoryCache(),
  });
  const results = [];
  try {
    for (let i = 0; i < 2; i++) {
      const r = await client.query({ query: gql(query), variables: { id: resourceId }, fetchPolicy: "no-cache" });
      results.push(r.data);
    }
    return { method: rec.seen.join(","), data: results };
  } catch (err) {
    return { method: rec.seen.join(","), error: describe(err) };
  }
}

async function graphqlRequest(extraHeaders) {
  const rec = recording();
  const client = new GraphQLClient(url, { method: "GET", headers: { ...headers, ...extraHeaders }, fetch: rec.fetch });
  try {
    const data = await client.request(query, { id: resourceId });
    return { method: rec.seen.join(","), data };
  } catch (err) {
    return { method: rec.seen.join(","), error: describe(err) };
  }
}

const out = {
  apolloGET: await apollo(query, { id: resourceId }),
  apolloInvalid: await apollo(`query Invalid { noSuchField }`, {}),
  apolloPersisted: await apolloPersisted(),
  graphqlRequestGET: await graphqlRequest({ "Apollo-Require-Preflight": "true" }),
  graphqlRequestGETWithoutHeader: await graphqlRequest({}),
};
process.stdout.write(JSON.stringify(out) + "\n");
