// node e2e/playground_live.mjs <playground URL> <upstream URL> <order id>:
// opens the playground, switches to its second tab (the example
// subscription), presses Run, then makes a new order on the local REST
// service every 300 ms until the response pane shows a CREATED event of one
// of them. Prints {tabs, created, shown, consoleErrors, pageErrors,
// cspViolations}.
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
  await page.click('.graphiql-execute-button'); // stop
  return { tabs, created, shown: shown.slice(0, 2000) };
}));
