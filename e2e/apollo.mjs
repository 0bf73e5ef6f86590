// node e2e/apollo.mjs <page URL>: opens the cross-origin Apollo Client page
// (apollo_page.mjs) in chromium, waits until it has run its queries and
// prints {results: {post, get}, requests: [{method, url, status, body (when
// not 200)}], ...errors}.
import { main, withPage } from './browser.mjs';

const url = process.argv[2];
main(() => withPage(async (page) => {
  const requests = [];
  const pending = [];
  page.on('response', (r) => {
    if (new URL(r.url()).pathname !== '/graphql' || r.request().method() === 'OPTIONS') return;
    const seen = { method: r.request().method(), status: r.status(), url: r.url() };
    requests.push(seen);
    if (r.status() !== 200) pending.push(r.text().then((t) => { seen.body = t.slice(0, 1000); }, () => {}));
  });
  await page.goto(url);
  await page.waitForSelector('body[data-done="true"]', { timeout: 60_000 });
  const results = JSON.parse(await page.textContent('#results'));
  await Promise.all(pending);
  return { results, requests };
}));
