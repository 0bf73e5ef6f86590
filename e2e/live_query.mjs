// Runs one @live query with the two clients of docs/live-data.md's "Clients":
// graphql-ws directly, its results through applyLiveQueryJSONPatch
// (@n1ru4l/graphql-live-query-patch-json-patch), and urql, whose
// subscriptionExchange forwards @live queries to graphql-ws through the same
// applier (applyAsyncIterableIteratorToSink). As live_query_test.go asks:
// node live_query.mjs <endpoint> <authorization> <service-network-id>
// <query> <variables as JSON>. Reports what each client sees, one JSON
// object a line, until its standard input closes:
//
//	{client: "graphqlWs"|"urql", kind: "wire", revision, fields, patch, bytes}
//	  a result as the server sent it, before the applier (fields: its keys);
//	{client, kind: "result", data, errors}  a result as the client's user gets it;
//	{client: "urql", kind: "sent", query}  the document urql sent;
//	{client, kind: "error"|"complete", error}.
import { createClient } from "graphql-ws";
import { Client, cacheExchange, fetchExchange, subscriptionExchange } from "@urql/core";
import { applyLiveQueryJSONPatch } from "@n1ru4l/graphql-live-query-patch-json-patch";
import { applyAsyncIterableIteratorToSink } from "@n1ru4l/push-pull-async-iterable-iterator";

const [url, authorization, networkId, query, variablesJSON] = process.argv.slice(2);
const variables = JSON.parse(variablesJSON);
const credentials = { Authorization: authorization, "service-network-id": networkId };
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const failed = (client) => (err) => out({ client, kind: "error", error: String(err?.message || err?.reason || JSON.stringify(err)) });

// wire passes a client's results through, reporting each as it came.
async function* wire(client, results) {
  for await (const r of results) {
    out({ client, kind: "wire", revision: r.revision, fields: Object.keys(r).sort(), patch: r.patch, bytes: JSON.stringify(r).length });
    yield r;
  }
}

// (a) graphql-ws directly.
const ws = createClient({ url: url.replace(/^http/, "ws"), connectionParams: credentials, webSocketImpl: globalThis.WebSocket });
(async () => {
  try {
    for await (const { data, errors } of applyLiveQueryJSONPatch(wire("graphqlWs", ws.iterate({ query, variables })))) {
      out({ client: "graphqlWs", kind: "result", data, errors });
    }
    out({ client: "graphqlWs", kind: "complete" });
  } catch (err) {
    failed("graphqlWs")(err);
  }
})();

// (b) urql: @live queries (and subscriptions) through graphql-ws, the
// patches applied before urql sees the results; other operations by fetch.
const isLive = (operation) => operation.query.definitions.some((d) =>
  d.kind === "OperationDefinition" && d.directives?.some((x) => x.name.value === "live"));
const urqlWs = createClient({ url: url.replace(/^http/, "ws"), connectionParams: credentials, webSocketImpl: globalThis.WebSocket });
const urql = new Client({
  url,
  fetchOptions: { headers: credentials },
  exchanges: [
    cacheExchange,
    subscriptionExchange({
      isSubscriptionOperation: (operation) => operation.kind === "subscription" || isLive(operation),
      forwardSubscription: (request) => ({
        subscribe: (sink) => {
          out({ client: "urql", kind: "sent", query: request.query });
          const results = applyLiveQueryJSONPatch(wire("urql", urqlWs.iterate(request)));
          return { unsubscribe: applyAsyncIterableIteratorToSink(results, sink) };
        },
      }),
    }),
    fetchExchange,
  ],
});
const urqlSub = urql.query(query, variables).subscribe((result) => {
  if (result.error?.networkError) failed("urql")(result.error.networkError);
  else out({ client: "urql", kind: "result", data: result.data, errors: result.error?.graphQLErrors });
});

process.stdin.resume();
process.stdin.on("end", () => {
  urqlSub.unsubscribe();
  urqlWs.dispose();
  ws.dispose();
  process.exit(0);
});
