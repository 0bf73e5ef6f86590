// The facade as a Federation v2 subgraph under real routers
// (federation_test.go drives it): composes a supergraph from the facade's
// subgraph schema (../schema.graphqls, what `_service { sdl }` returns) and a
// second subgraph of reviews (reviews-subgraph.graphql, served here with
// @apollo/subgraph), with @theguild/federation-composition and with
// @apollo/composition, then serves it with Hive Gateway and with
// @apollo/gateway and runs the scenarios of federation_test.go through each.
// Before each scenario it resets the local REST service's counters
// (POST /_stats/reset) and after it reads them (GET /_stats), so the test
// asserts the REST calls each made. Prints one JSON object.
//
// Usage: node federation.mjs <config JSON>, the config holding facadeURL,
// statsURL, routerSecretHeader, routerSecret, bearer, readonly, networkId,
// resources (ids), products (ids), unknownResource, location, bookings
// (one booking input per router).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parse, graphql } from 'graphql';
import { composeServices as guildCompose } from '@theguild/federation-composition';
import { composeServices as apolloCompose } from '@apollo/composition';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime } from '@graphql-hive/gateway';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';

const cfg = JSON.parse(process.argv[2]);
const out = { composition: {}, routers: {} };

// ---- The reviews subgraph ----

const R = cfg.resources;
const stars = (i) => (i % 5) + 1;
const review = (i, resource) => ({ id: `r${i}`, stars: stars(i), resourceId: resource });
const reviewsOf = (resourceId) => [0, 1].map((k) => review(1000 + k, resourceId));
const resolvers = {
  Query: {
    reviews: (_, { first, distinct }) => Array.from({ length: first }, (_, i) => review(i, R[i % distinct])),
    productReviews: () => [cfg.products[0], cfg.products[1], cfg.products[0]].map((p, i) => ({ id: `p${i}`, stars: stars(i), productId: p })),
    review: (_, { id }) => (id === 'missing' ? review(9999, cfg.unknownResource) : null),
  },
  Review: {
    resource: (r) => (r.resourceId ? { id: r.resourceId } : null),
    product: (r) => (r.productId ? { id: r.productId } : null),
  },
  Resource: {
    __resolveReference: (ref) => ({ id: ref.id }),
    reviews: (r) => reviewsOf(r.id),
    averageStars: (r) => reviewsOf(r.id).reduce((s, x) => s + x.stars, 0) / 2,
  },
  Product: { __resolveReference: (ref) => ({ id: ref.id }), reviewCount: () => 2 },
  Location: { __resolveReference: (ref) => ({ id: ref.id, rating: 4.5 }) },
};
const reviewsSDL = readFileSync('reviews-subgraph.graphql', 'utf8');
const reviewsSchema = buildSubgraphSchema({ typeDefs: parse(reviewsSDL), resolvers });
let reviewsRequests = 0;
const reviewsServer = createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  reviewsRequests++;
  const { query, variables, operationName } = JSON.parse(body);
  const result = await graphql({ schema: reviewsSchema, source: query, variableValues: variables, operationName });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(result));
});
const reviewsURL = await listen(reviewsServer);

// ---- Composition ----

const facadeSDL = readFileSync('../schema.graphqls', 'utf8');
const services = [
  { name: 'facade', typeDefs: parse(facadeSDL), url: cfg.facadeURL },
  { name: 'reviews', typeDefs: parse(reviewsSDL), url: reviewsURL },
];
const guild = guildCompose(services);
out.composition.guild = { errors: (guild.errors ?? []).map((e) => e.message) };
const apollo = apolloCompose(services);
out.composition.apollo = {
  errors: (apollo.errors ?? []).map((e) => e.message),
  hints: (apollo.hints ?? []).map((h) => `${h.definition.code}: ${h.message}`),
};
if (guild.errors || apollo.errors) {
  finish();
}

// ---- The routers ----

// Both forward the caller's credentials to every subgraph, and the router's
// shared secret to the facade (docs/federation.md).
const forwarded = ['authorization', 'service-network-id'];

const hive = createGatewayRuntime({
  supergraph: guild.supergraphSdl,
  logging: false,
  deferStream: true,
  propagateHeaders: {
    fromClientToSubgraphs({ request, subgraphName }) {
      const h = {};
      for (const name of forwarded) h[name] = request.headers.get(name);
      if (subgraphName === 'facade') h[cfg.routerSecretHeader] = cfg.routerSecret;
      return h;
    },
  },
});
const hiveURL = (await listen(createServer(hive))) ;

const gateway = new ApolloGateway({
  supergraphSdl: apollo.supergraphSdl,
  buildService: ({ name, url }) =>
    new RemoteGraphQLDataSource({
      url,
      willSendRequest({ request, context }) {
        for (const h of forwarded) if (context[h]) request.http.headers.set(h, context[h]);
        if (name === 'facade') request.http.headers.set(cfg.routerSecretHeader, cfg.routerSecret);
      },
    }),
});
const apolloServer = new ApolloServer({ gateway, includeStacktraceInErrorResponses: false });
const { url: apolloURL } = await startStandaloneServer(apolloServer, {
  listen: { host: '127.0.0.1', port: 0 },
  context: async ({ req }) => Object.fromEntries(forwarded.map((h) => [h, req.headers[h]])),
});

// ---- Scenarios ----

const bearer = { authorization: cfg.bearer, 'service-network-id': cfg.networkId };
const readonly = { authorization: cfg.readonly, 'service-network-id': cfg.networkId };

const scenarios = (router) => [
  // Starts in the reviews subgraph, enters the facade through _entities:
  // 12 reviews of 4 resources.
  ['intoFacade', bearer, `{ reviews(first: 12, distinct: 4) { id stars resource { id title capacity } } }`],
  // Starts in the facade, crosses to the reviews subgraph (resource and
  // location by key).
  ['fromFacade', bearer, `query($id: ID!) { resource(id: $id) { id title reviews { id stars } averageStars location { id rating } } }`, { id: R[0] }],
  // A mutation of the facade whose answer crosses to the reviews subgraph.
  ['mutation', bearer, `mutation($in: CreateBookingInput!) { createBooking(input: $in) { booking { id resourceRef resource { id title averageStars } } } }`, { in: cfg.bookings[router] }],
  // Not found: a review of a resource the upstream does not know.
  ['notFound', bearer, `{ review(id: "missing") { id stars resource { id title } } }`],
  // Forbidden, then allowed: product entities need the full shop scope.
  ['forbidden', readonly, `{ productReviews { id product { id title } } }`],
  ['allowed', bearer, `{ productReviews { id product { id title } } }`],
  // No caller credentials: _entities is UNAUTHENTICATED although the
  // facade has server-to-server credentials.
  ['noCredentials', {}, `{ reviews(first: 2, distinct: 2) { id resource { id title } } }`],
  // The budget: 30 distinct resources in one _entities batch.
  ['budget', bearer, `{ reviews(first: 30, distinct: 30) { id resource { id title } } }`],
];

for (const [router, url] of [['hive', hiveURL], ['apollo', apolloURL]]) {
  const results = {};
  for (const [name, headers, query, variables] of scenarios(router)) {
    results[name] = await measured(() => post(url, headers, { query, variables }));
  }
  if (router === 'hive') {
    // @defer through the router: the titles the facade resolves (through
    // _entities) arrive in a later part; the whole equals the same query
    // without @defer.
    const q = (d) => `{ reviews(first: 4, distinct: 2) { id stars resource { id ${d ? '... @defer {' : ''} title ${d ? '}' : ''} } } }`;
    results.deferPlain = await measured(() => post(url, bearer, { query: q(false) }));
    results.defer = await measured(() => postIncremental(url, bearer, { query: q(true) }));
  }
  out.routers[router] = results;
}
finish();

// ---- Helpers ----

function finish() {
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}/graphql`)));
}

// measured runs f between a reset and a read of the local REST service's
// counters, and of the reviews subgraph's request count.
async function measured(f) {
  await fetch(cfg.statsURL + '/reset', { method: 'POST' });
  const before = reviewsRequests;
  const result = await f();
  const stats = await (await fetch(cfg.statsURL)).json();
  return { ...result, stats, reviewsRequests: reviewsRequests - before };
}

async function post(url, headers, body) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...headers },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  return { status: res.status, data: json.data ?? null, errors: json.errors ?? [] };
}

// postIncremental posts a query with @defer asking for multipart/mixed and
// merges its parts: the initial data, then each incremental part's data at
// its path. parts counts the payloads.
async function postIncremental(url, headers, body) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed', ...headers },
    body: JSON.stringify(body),
  });
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  const m = /boundary="?([^";]+)"?/.exec(type);
  if (!type.startsWith('multipart/mixed') || !m) {
    return { status: res.status, contentType: type, data: null, errors: [{ message: `not multipart: ${text.slice(0, 300)}` }], parts: 0 };
  }
  let data = null;
  const errors = [];
  let parts = 0;
  for (const chunk of text.split(`--${m[1]}`)) {
    const i = chunk.indexOf('\r\n\r\n');
    if (i < 0) continue;
    const payload = chunk.slice(i + 4).trim();
    if (!payload.startsWith('{')) continue;
    const p = JSON.parse(payload);
    parts++;
    if (p.data !== undefined) data = p.data;
    errors.push(...(p.errors ?? []));
    for (const inc of p.incremental ?? []) {
      errors.push(...(inc.errors ?? []));
      if (inc.data) Object.assign(at(data, inc.path), inc.data);
    }
  }
  return { status: res.status, contentType: type, data, errors, parts, raw: text.slice(0, 4000) };
}

function at(v, path) {
  for (const k of path) v = v[k];
  return v;
}
