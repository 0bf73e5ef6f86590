// Subscribes to one location's orderEvents with the real clients of
// docs/live-data.md (graphql-ws, graphql-sse in distinct connections mode,
// Apollo Client's GraphQLWsLink), then makes a new order on the local REST
// service every 200 ms until each client has received a CREATED event of
// one of them, as live_test.go asks: node live.mjs <endpoint>
// <authorization> <service-network-id> <location> <upstream URL> <order
// id>. Prints one JSON object: per client {events: [{kind, id}], error},
// and created: the ids of the orders made.
import { ApolloClient, InMemoryCache, gql } from "@apollo/client";
import { GraphQLWsLink } from "@apollo/client/link/subscriptions";
import { createClient as createWsClient } from "graphql-ws";
import { createClient as createSseClient } from "graphql-sse";

const [url, authorization, networkId, location, upstream, orderId] = process.argv.slice(2);
const wsURL = url.replace(/^http/, "ws");
const credentials = { Authorization: authorization, "service-network-id": networkId };
const query = `subscription($loc: ID!) { orderEvents(locationId: $loc) { kind node { id status product { title } } } }`;
const variables = { loc: location };

const results = {};
const created = [];
const stops = [];
function record(name) {
  results[name] = { events: [] };
  return {
    next: (r) => {
      const e = r.data?.orderEvents;
      results[name].events.push(e ? { kind: e.kind, id: e.node?.id, product: e.node?.product?.title } : { errors: r.errors });
    },
    error: (err) => { results[name].error = String(err?.message || err?.reason || JSON.stringify(err)); },
    complete: () => {},
  };
}

const ws = createWsClient({ url: wsURL, connectionParams: credentials, webSocketImpl: globalThis.WebSocket });
stops.push(ws.subscribe({ query, variables }, record("graphqlWs")));
stops.push(() => ws.dispose());

const sse = createSseClient({ url, headers: credentials });
stops.push(sse.subscribe({ query, variables }, record("graphqlSse")));
stops.push(() => sse.dispose());

const apolloWs = createWsClient({ url: wsURL, connectionParams: credentials, webSocketImpl: globalThis.WebSocket });
const apollo = new ApolloClient({ link: new GraphQLWsLink(apolloWs), cache: new InMemoryCache() });
const sink = record("apollo");
const sub = apollo.subscribe({ query: gql(query), variables }).subscribe({ next: sink.next, error: sink.error });
stops.push(() => sub.unsubscribe());
stops.push(() => apolloWs.dispose());

const got = (name) => results[name].error || results[name].events.some((e) => e.kind === "CREATED" && created.includes(e.id));
const deadline = Date.now() + 60_000;
while (!["graphqlWs", "graphqlSse", "apollo"].every(got) && Date.now() < deadline) {
  const res = await fetch(`${upstream}/_test/orders/${orderId}/copy`, { method: "POST", body: JSON.stringify({ status: "new" }) });
  created.push((await res.json()).id);
  await new Promise((r) => setTimeout(r, 200));
}
for (const stop of stops) stop();
console.log(JSON.stringify({ created, ...results }));
process.exit(0);
