// Runs a query with @defer through Apollo Client 4 with each of its
// incremental handlers (Defer20220824Handler: deferSpec=20220824;
// GraphQL17Alpha9Handler: incrementalSpec=v0.2, asked for in the Accept
// header as docs/incremental-delivery.md shows), through urql's
// fetchExchange with its own Accept (Server-Sent Events come first in it)
// and with multipart/mixed only, and through the urql client of
// docs/incremental-delivery.md's snippet, and the same query without @defer through
// Apollo Client; and a query with @stream on a connection's nodes through
// Defer20220824Handler and without @stream; and, through Apollo Client's
// cache with each handler, the dataState of each result of two deferred
// queries (one deferring inside a list), as defer_test.go asks: node
// defer.mjs <endpoint> <authorization> <service-network-id> <location id>.
// Prints one JSON object on stdout: per case {data, results, states,
// error}, results being the number of results the client emitted with data
// (the first one before the deferred parts), states their dataState.
import { ApolloClient, HttpLink, InMemoryCache, gql } from "@apollo/client";
import { Defer20220824Handler, GraphQL17Alpha9Handler } from "@apollo/client/incremental";
import { Client as UrqlClient, fetchExchange } from "@urql/core";
import { readFileSync } from "node:fs";

const [url, authorization, networkId, locationId] = process.argv.slice(2);
const headers = { authorization, "service-network-id": networkId };

const deferred = `query Dashboard($locationId: ID!) {
  location(id: $locationId) {
    id
    products { id title }
    ... @defer(label: "transactions") {
      transactions(first: 10) { nodes { id amount booking { resource { id title capacity } } } }
    }
    ... @defer(label: "creditNotes") {
      creditNotes(first: 5) { nodes { id number invoice { id number } } }
    }
  }
}`;
const plain = deferred.replace(/@defer\([^)]*\)/g, "");
// Each transaction's links deferred inside the list: booking is a plain
// field, its resource loaded beneath it.
const links = `query Links($locationId: ID!) {
  location(id: $locationId) {
    id
    products { id title }
    transactions(first: 10) {
      nodes { id amount ... @defer(label: "links") { booking { resource { id title capacity } } } }
    }
  }
}`;
const streamed = `query Streamed($locationId: ID!) {
  location(id: $locationId) {
    id
    transactions(first: 20) { nodes @stream(initialCount: 2) { id amount booking { resource { id capacity } } } }
  }
}`;
const streamedPlain = streamed.replace(/@stream\([^)]*\)/g, "");

// run sends doc through Apollo Client until its result is complete, and
// returns the last data, the number of results emitted with data and the
// dataState of each. fetchPolicy "no-cache" reads each result as it
// arrives; "network-only" writes it to the cache and reads it back from
// there, as a UI reads it.
async function run(doc, handler, extraHeaders = {}, fetchPolicy = "no-cache") {
  const client = new ApolloClient({
    link: new HttpLink({ uri: url, headers: { ...headers, ...extraHeaders } }),
    cache: new InMemoryCache(),
    incrementalHandler: handler,
  });
  const states = [];
  let last;
  try {
    await new Promise((resolve, reject) => {
      const sub = client
        .watchQuery({ query: gql(doc), variables: { locationId }, fetchPolicy })
        .subscribe({
          next: (r) => {
            if (r.error) return reject(r.error);
            if (r.data) {
              states.push(r.dataState);
              last = r.data;
            }
            if (!r.loading && r.dataState === "complete") {
              sub.unsubscribe();
              resolve();
            }
          },
          error: reject,
        });
      setTimeout(() => reject(new Error("no complete result in 60 s")), 60_000).unref();
    });
    return { data: last, results: states.length, states };
  } catch (err) {
    return { error: { name: err.name, message: String(err.message).slice(0, 300) }, results: states.length, states };
  }
}

async function urql(accept) {
  const client = new UrqlClient({
    url,
    exchanges: [fetchExchange],
    // urql sets its own Content-Type and Accept unless fetchOptions names them.
    fetchOptions: () => ({ headers: { ...headers, "content-type": "application/json", ...(accept ? { accept } : {}) } }),
    requestPolicy: "network-only",
  });
  let results = 0;
  try {
    const data = await new Promise((resolve, reject) => {
      const { unsubscribe } = client.query(deferred, { locationId }).subscribe((r) => {
        results++;
        if (r.error) {
          reject(r.error);
        } else if (!r.hasNext) {
          resolve(r.data);
        }
      });
      setTimeout(() => { unsubscribe(); reject(new Error("no last result in 60 s")); }, 60_000).unref();
    });
    return { data, results };
  } catch (err) {
    return { error: { name: err.name, message: String(err.message).slice(0, 300) }, results };
  }
}

// documentedUrql runs the deferred query through the urql client of
// docs/incremental-delivery.md's snippet, as written there (its URL
// replaced by this facade's).
async function documentedUrql() {
  const doc = readFileSync(new URL("../docs/incremental-delivery.md", import.meta.url), "utf8");
  const m = /```js\n(import \{ Client, fetchExchange \} from "@urql\/core";\n[\s\S]*?)```/.exec(doc);
  if (!m) return { error: { name: "Error", message: "docs/incremental-delivery.md has no urql snippet" }, results: 0 };
  const body = m[1].replace(/^import .*$/m, "").replace('"http://127.0.0.1:8080/graphql"', JSON.stringify(url));
  const client = new Function("Client", "fetchExchange", "authorization", "networkId", `${body}\nreturn client;`)(
    UrqlClient, fetchExchange, authorization, networkId);
  let results = 0;
  try {
    const data = await new Promise((resolve, reject) => {
      const { unsubscribe } = client.query(deferred, { locationId }, { requestPolicy: "network-only" }).subscribe((r) => {
        results++;
        if (r.error) {
          reject(r.error);
        } else if (!r.hasNext) {
          resolve(r.data);
        }
      });
      setTimeout(() => { unsubscribe(); reject(new Error("no last result in 60 s")); }, 60_000).unref();
    });
    return { data, results };
  } catch (err) {
    return { error: { name: err.name, message: String(err.message).slice(0, 300) }, results };
  }
}

const out = {
  plain: await run(plain),
  streamPlain: await run(streamedPlain),
  streamDefer20220824: await run(streamed, new Defer20220824Handler()),
  defer20220824: await run(deferred, new Defer20220824Handler()),
  graphql17Alpha9: await run(deferred, new GraphQL17Alpha9Handler(), { accept: "multipart/mixed;incrementalSpec=v0.2" }),
  linksPlain: await run(links.replace(/@defer\([^)]*\)/g, "")),
  statesDefer20220824: await run(deferred, new Defer20220824Handler(), {}, "network-only"),
  statesGraphql17Alpha9: await run(deferred, new GraphQL17Alpha9Handler(), { accept: "multipart/mixed;incrementalSpec=v0.2" }, "network-only"),
  linksStatesDefer20220824: await run(links, new Defer20220824Handler(), {}, "network-only"),
  linksStatesGraphql17Alpha9: await run(links, new GraphQL17Alpha9Handler(), { accept: "multipart/mixed;incrementalSpec=v0.2" }, "network-only"),
  urqlSSE: await urql(),
  urqlMultipart: await urql("multipart/mixed"),
  urqlDocumented: await documentedUrql(),
};
process.stdout.write(JSON.stringify(out));
