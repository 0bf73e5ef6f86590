// node e2e/playground_defer.mjs <playground URL> <query>: opens the
// playground, replaces the query editor's text with query (a query with
// @defer, its variables inline), presses Run and prints what the page showed
// once the response's last part came: {contentType, result (the result pane,
// parsed), count, parts: [{part, calls}], rows: [{route, part}]} with the
// page's console errors, uncaught errors and CSP violations.
// $PLAYGROUND_SCREENSHOT, when set, is where a screenshot goes.
import { main, withPage } from './browser.mjs';

const [url, query] = process.argv.slice(2);

main(() => withPage(async (page) => {
  await page.goto(url);
  await page.waitForSelector('.graphiql-sidebar [aria-label$="Documentation Explorer"]', { timeout: 60_000 });
  await page.evaluate((q) => {
    document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue(q);
  }, query);
  const answered = page.waitForResponse((r) => {
    if (new URL(r.url()).pathname !== '/graphql' || r.request().method() !== 'POST') return false;
    try { return JSON.parse(r.request().postData() || '{}').operationName !== 'IntrospectionQuery'; } catch { return false; }
  }, { timeout: 60_000 });
  await page.click('.graphiql-execute-button');
  const resp = await answered;
  const contentType = resp.headers()['content-type'];
  // The panel shows the report of the last part.
  await page.waitForSelector('[data-testid="upstream-calls"][data-seq="1"] [data-upstream-count]', { timeout: 60_000 });
  const shown = await page.evaluate(() => ({
    result: document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue(),
    count: Number(document.querySelector('[data-upstream-count]').dataset.upstreamCount),
    parts: [...document.querySelectorAll('[data-upstream-part]')].map((e) => ({ part: e.dataset.upstreamPart, calls: Number(e.dataset.calls) })),
    rows: [...document.querySelectorAll('[data-upstream-call]')].map((e) => ({ route: e.dataset.upstreamCall, part: e.dataset.part })),
  }));
  let result;
  try { result = JSON.parse(shown.result); } catch { result = shown.result; }
  if (process.env.PLAYGROUND_SCREENSHOT) {
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.screenshot({ path: process.env.PLAYGROUND_SCREENSHOT });
  }
  return { contentType, ...shown, result };
}));
