// Runs graphql-http's GraphQL-over-HTTP server audits against the endpoint
// given as the first argument, twice: as the audits send their requests, and
// with every request carrying Apollo-Require-Preflight: true (what CSRF
// prevention asks of a GET). Prints one JSON object on stdout:
// {"plain": [result...], "preflight": [result...]}, each result
// {id, name, status: "ok"|"error"|"warn"|"notice", reason, httpStatus, code}
// where code is the first error's extensions.code of a failed audit's
// response, when it could be read. Run by audit_test.go.
import { serverAudits } from "graphql-http";

const url = process.argv[2];
if (!url) {
  console.error("usage: node audit.mjs <graphql endpoint URL>");
  process.exit(2);
}

function withPreflight(input, init = {}) {
  const headers = new Headers(init.headers);
  headers.set("Apollo-Require-Preflight", "true");
  return fetch(input, { ...init, headers });
}

async function run(fetchFn) {
  const out = [];
  for (const { fn } of serverAudits({ url, fetchFn })) {
    const r = await fn();
    const res = { id: r.id, name: r.name, status: r.status };
    if (r.status !== "ok") {
      res.reason = r.reason;
      res.httpStatus = r.response?.status;
      try {
        const body = JSON.parse(await r.response.clone().text());
        res.code = body?.errors?.[0]?.extensions?.code;
      } catch {
        // the body was consumed by the assertion, or is not JSON
      }
    }
    out.push(res);
  }
  return out;
}

const plain = await run(fetch);
const preflight = await run(withPreflight);
process.stdout.write(JSON.stringify({ plain, preflight }) + "\n");
