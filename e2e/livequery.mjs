// Runs a @live query with the clients docs/live-data.md names: graphql-ws
// directly, its results through @n1ru4l/graphql-live-query-patch-json-patch
// (applyLiveQueryJSONPatch), as live_query_test.go asks: node
// livequery.mjs <endpoint> <authorization> <service-network-id> <location>
// <upstream URL> <order id> <status>. After the first result it sets the
// order's status on the local REST service, and takes the next result.
// Prints one JSON object: {first, second: the data each result gave,
// revisions: the raw results' revisions, error}.
import { createClient } from "graphql-ws";
import { applyLiveQueryJSONPatch } from "@n1ru4l/graphql-live-query-patch-json-patch";

const [url, authorization, networkId, location, upstream, orderId, status] = process.argv.slice(2);
const query = `query($l: ID!) @live { location(id: $l) { id orders(first: 5) { nodes { id status product { title } } } } }`;
const out = { revisions: [] };
const client = createClient({ url: url.replace(/^http/, "ws"), connectionParams: { Authorization: authorization, "service-network-id": networkId }, webSocketImpl: globalThis.WebSocket });
const timer = setTimeout(() => { out.error = "timed out"; console.log(JSON.stringify(out)); process.exit(0); }, 30000);
try {
  async function* raw() {
    for await (const r of client.iterate({ query, variables: { l: location } })) {
      out.revisions.push(r.revision);
      yield r;
    }
  }
  for await (const r of applyLiveQueryJSONPatch(raw())) {
    if (r.errors) { out.error = JSON.stringify(r.errors); break; }
    if (!out.first) {
      out.first = structuredClone(r.data);
      const res = await fetch(`${upstream}/_test/orders/${orderId}/set`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ status }) });
      if (!res.ok) { out.error = `set: ${res.status}`; break; }
      continue;
    }
    out.second = r.data;
    break;
  }
} catch (err) {
  out.error = String(err?.message || err);
}
clearTimeout(timer);
await client.dispose();
console.log(JSON.stringify(out));
