// Entry of the cross-origin page of TestBrowserApolloClientCrossOrigin,
// bundled by esbuild in the test (never committed as a bundle). The page's
// #page-config element holds {endpoint, headers, query, variables}; the
// page runs the query through Apollo Client 4 twice, by POST (HttpLink) and by
// GET (HttpLink with useGETForQueries), and writes
// {post: {data?, error?}, get: {...}} into #results, then marks
// document.body with data-done="true".
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';

const cfg = JSON.parse(document.getElementById('page-config').textContent);

async function run(useGETForQueries) {
  const client = new ApolloClient({
    link: new HttpLink({ uri: cfg.endpoint, headers: cfg.headers, useGETForQueries }),
    cache: new InMemoryCache(),
  });
  try {
    const res = await client.query({ query: gql(cfg.query), variables: cfg.variables, fetchPolicy: 'network-only' });
    return { data: res.data ?? null, error: res.error ? String(res.error.message || res.error) : undefined };
  } catch (e) {
    return { error: String((e && e.message) || e) };
  }
}

const post = await run(false);
const get = await run(true);
document.getElementById('results').textContent = JSON.stringify({ post, get });
document.body.dataset.done = 'true';
