// node e2e/playground_live.mjs <playground URL>: opens the playground,
// switches to its second tab (the example subscription, on the demo
// activity's location), presses Run and waits, while the demo activity (run
// by the test) makes orders, until the result pane lists at least two
// events; then reads the pane (the event log, parsed) and the Upstream calls
// panel's rows for the last event, and stops the subscription. Prints {tabs,
// pane, rows, consoleErrors, pageErrors, cspViolations}.
import { main, withPage } from './browser.mjs';

const [url] = process.argv.slice(2);

main(() => withPage(async (page) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(url);
  await page.waitForSelector('.graphiql-sidebar [aria-label$="Documentation Explorer"]', { timeout: 60_000 });
  const tabs = await page.locator('.graphiql-tab').count();
  await page.locator('.graphiql-tab').nth(1).click();
  await page.waitForFunction(() => /subscription LiveOrders/.test(document.querySelector('.graphiql-query-editor')?.innerText || ''), null, { timeout: 60_000 });
  await page.click('.graphiql-execute-button');
  const paneText = () => page.evaluate(() => document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror.getValue() || '');
  let pane = null;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try { pane = JSON.parse(await paneText()); } catch { pane = null; }
    if (pane && pane.events && pane.events.filter((e) => /"CREATED"/.test(JSON.stringify(e))).length >= 2) break;
    await page.waitForTimeout(200);
  }
  // The panel shows the report of the last event: its poll, then its links.
  await page.waitForSelector('[data-testid="upstream-calls"] [data-upstream-call][data-part="poll"]', { timeout: 60_000 });
  await page.click('.graphiql-execute-button'); // stop
  const rows = await page.evaluate(() => [...document.querySelectorAll('[data-upstream-call]')].map((e) => ({
    route: e.dataset.upstreamCall, part: e.dataset.part, status: Number(e.dataset.status), poll: e.classList.contains('upstream-poll'),
  })));
  return { tabs, pane, rows };
}));
