// node e2e/playground.mjs <playground URL> [runs] [screenshot]: opens the
// playground in a 1280x800 window, reads the headers editor and whether the
// "Upstream calls" panel is open, presses Run `runs` times (default 2) and
// prints what the page showed after each run:
// {panelOpen, headersEditor, runs: [{response, traceHeader, resultShown,
//  count, cacheHits, summary, calls: [{route, status, cached, shared, batch,
//  barWidth}], cut: [route text]}], viewport, consoleErrors, pageErrors,
//  cspViolations}. cut lists the routes of the panel (its rows and its
// per-route list) not shown whole: clipped, ellipsised or outside the panel
// or the window. Without the panel, a run has only response, traceHeader and
// resultShown. A screenshot of the window after the last run goes to
// `screenshot` (else $PLAYGROUND_SCREENSHOT, when set).
import { main, withPage } from './browser.mjs';

const url = process.argv[2];
const times = Number(process.argv[3] || 2);
const screenshot = process.argv[4] || process.env.PLAYGROUND_SCREENSHOT;
const viewport = { width: 1280, height: 800 };

main(() => withPage(async (page) => {
  await page.setViewportSize(viewport);
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
      const panel = document.querySelector('[data-testid="upstream-calls"]').getBoundingClientRect();
      const whole = (e) => {
        const r = e.getBoundingClientRect();
        const st = getComputedStyle(e);
        return e.scrollWidth <= e.clientWidth + 1 && r.left >= panel.left - 1 && r.right <= panel.right + 1 &&
          r.right <= window.innerWidth && r.width > 0 && !(st.textOverflow === 'ellipsis' && st.whiteSpace === 'nowrap');
      };
      return {
        cut: [...document.querySelectorAll('.upstream-route, .upstream-routes code')].filter((e) => !whole(e)).map((e) => e.innerText),
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
  if (screenshot) {
    await page.screenshot({ path: screenshot });
  }
  return { panelOpen, headersEditor, runs, viewport: page.viewportSize() };
}));
