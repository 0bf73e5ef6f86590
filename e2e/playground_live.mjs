// node e2e/playground_live.mjs <playground URL> <upstream URL> <order id>:
// opens the playground, switches to its second tab (the example
// subscription), presses Run, then makes a new order on the local REST
// service every 300 ms until the response pane shows a CREATED event of one
// of them, and reads the Upstream calls panel's rows for that event. Prints
// {tabs, created, shown, rows, consoleErrors, pageErrors, cspViolations}.
import { main, withPage } from './browser.mjs';

const [url, upstream, orderId] = process.argv.slice(2);

main(() => withPage(async (page) => {
  await page.goto(url);
  await page.waitForSelector('.graphiql-sidebar [aria-label$="Documentation Explorer"]', { timeout: 60_000 });
  const tabs = await page.locator('.graphiql-tab').count();
  await page.locator('.graphiql-tab').nth(1).click();
  await page.waitForFunction(() => /subscription LiveOrders/.test(document.querySelector('.graphiql-query-editor')?.innerText || ''), null, { timeout: 60_000 });
  await page.click('.graphiql-execute-button');
  const created = [];
  let shown = '';
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    shown = await page.evaluate(() => document.querySelector('.graphiql-response')?.innerText || '');
    if (/"CREATED"/.test(shown)) break;
    const res = await fetch(`${upstream}/_test/orders/${orderId}/copy`, { method: 'POST', body: JSON.stringify({ status: 'new' }) });
    created.push((await res.json()).id);
    await page.waitForTimeout(300);
  }
  // The panel shows the report of the last event: its poll, then its links.
  await page.waitForSelector('[data-testid="upstream-calls"] [data-upstream-call][data-part="poll"]', { timeout: 60_000 });
  await page.click('.graphiql-execute-button'); // stop
  const rows = await page.evaluate(() => [...document.querySelectorAll('[data-upstream-call]')].map((e) => ({
    route: e.dataset.upstreamCall, part: e.dataset.part, status: Number(e.dataset.status), poll: e.classList.contains('upstream-poll'),
  })));
  return { tabs, created, shown: shown.slice(0, 2000), rows };
}));
