// Subscribes to one location's orderEvents with graphql-ws and graphql-sse
// (distinct connections mode), their default retry policies, through the
// endpoint given (a balancer in front of two replicas), and reports what
// each client sees, one JSON object a line, until its standard input
// closes: node live_rolling.mjs <endpoint> <authorization>
// <service-network-id> <location>.
//
// {client: "ws"|"sse", kind: "connected"|"connecting"|"closed"|"event"|"error"|"complete", ...}:
// "closed" carries the WebSocket's close code and reason, "connecting" (SSE)
// whether it is a reconnection, "event" the order's id and kind.
import { createClient as createWsClient } from "graphql-ws";
import { createClient as createSseClient } from "graphql-sse";

const [url, authorization, networkId, location] = process.argv.slice(2);
const credentials = { Authorization: authorization, "service-network-id": networkId };
const query = `subscription($loc: ID!) { orderEvents(locationId: $loc) { kind node { id } } }`;
const variables = { loc: location };
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");

function sink(client) {
  return {
    next: (r) => {
      const e = r.data?.orderEvents;
      out({ client, kind: "event", event: e?.kind, id: e?.node?.id, errors: r.errors });
    },
    error: (err) => out({ client, kind: "error", error: String(err?.reason || err?.message || JSON.stringify(err)) }),
    complete: () => out({ client, kind: "complete" }),
  };
}

const ws = createWsClient({
  url: url.replace(/^http/, "ws"),
  connectionParams: credentials,
  webSocketImpl: globalThis.WebSocket,
  retryAttempts: 10,
  on: {
    connected: () => out({ client: "ws", kind: "connected" }),
    closed: (e) => out({ client: "ws", kind: "closed", code: e?.code, reason: e?.reason }),
  },
});
ws.subscribe({ query, variables }, sink("ws"));

const sse = createSseClient({
  url,
  headers: credentials,
  retryAttempts: 10,
  on: {
    connecting: (reconnecting) => out({ client: "sse", kind: "connecting", reconnecting }),
    connected: (reconnected) => out({ client: "sse", kind: "connected", reconnected }),
  },
});
sse.subscribe({ query, variables }, sink("sse"));

process.stdin.resume();
process.stdin.on("end", () => {
  ws.dispose();
  sse.dispose();
  process.exit(0);
});
