// node e2e/playground.mjs <playground URL> [runs]: opens the playground,
// reads the headers editor and whether the "Upstream calls" panel is open,
// presses Run `runs` times (default 2) and prints what the page showed after
// each run:
// {panelOpen, headersEditor, runs: [{response, traceHeader, resultShown,
//  count, cacheHits, summary, calls: [{route, status, cached, shared, batch,
//  barWidth}]}], consoleErrors, pageErrors, cspViolations}.
// Without the panel, a run has only response, traceHeader and resultShown.
// $PLAYGROUND_SCREENSHOT, when set, is where a screenshot after the last run
// goes.
import { main, withPage } from './browser.mjs';

const url = process.argv[2];
const times = Number(process.argv[3] || 2);

main(() => withPage(async (page) => {
  await page.goto(url);
  await page.waitForSelector('.graphiql-container', { timeout: 60_000 });
  // The docs button appears once the schema is loaded: GraphiQL has
  // mounted everything by then, our panel included when configured.
  await page.waitForSelector('.graphiql-sidebar [aria-label$="Documentation Explorer"]', { timeout: 60_000 });
  const panel = page.locator('[data-testid="upstream-calls"]');
  const panelOpen = (await panel.count()) > 0 && await panel.isVisible();
  const headersEditor = await page.locator('.graphiql-editor-tool').innerText();

  const runs = [];
  for (let i = 0; i < times; i++) {
    // The operation's own request (not GraphiQL's schema fetch).
    const answered = page.waitForResponse((r) => {
      if (new URL(r.url()).pathname !== '/graphql' || r.request().method() !== 'POST') return false;
      try { return JSON.parse(r.request().postData() || '{}').operationName !== 'IntrospectionQuery'; } catch { return false; }
    }, { timeout: 60_000 });
    await page.click('.graphiql-execute-button');
    const resp = await answered;
    const response = await resp.json();
    const traceHeader = (await resp.request().allHeaders())['x-upstream-trace'] || null;
    await page.waitForFunction(() => /"location"/.test(document.querySelector('.graphiql-response')?.innerText || ''), null, { timeout: 60_000 });
    const resultShown = await page.evaluate(() => document.querySelector('.graphiql-response').innerText.slice(0, 2000));
    if (!panelOpen) {
      runs.push({ response, traceHeader, resultShown });
      continue;
    }
    // The panel numbers the responses it showed: wait for this run's.
    await page.waitForSelector(`[data-testid="upstream-calls"][data-seq="${i + 1}"] [data-upstream-count]`, { timeout: 60_000 });
    const shown = await page.evaluate(() => {
      const s = document.querySelector('[data-upstream-count]');
      return {
        count: Number(s.dataset.upstreamCount),
        cacheHits: Number(s.dataset.upstreamCacheHits),
        summary: s.innerText,
        calls: [...document.querySelectorAll('[data-upstream-call]')].map((e) => ({
          route: e.dataset.upstreamCall,
          status: Number(e.dataset.status),
          cached: e.dataset.cached === 'true',
          shared: e.dataset.shared === 'true',
          batch: Number(e.dataset.batch),
          barWidth: e.querySelector('.upstream-bar')?.getBoundingClientRect().width || 0,
        })),
      };
    });
    runs.push({ response, traceHeader, resultShown, ...shown });
  }
  if (process.env.PLAYGROUND_SCREENSHOT) {
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.screenshot({ path: process.env.PLAYGROUND_SCREENSHOT });
  }
  return { panelOpen, headersEditor, runs };
}));
