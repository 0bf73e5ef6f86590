// node e2e/playground_livequery.mjs <playground URL> <query> <screenshot>:
// opens the playground at 1280x800, replaces the query editor's text with
// query (a query marked @live, its variables inline), presses Run, waits
// for the result pane's revision 1, then (the test changes one order
// meanwhile) for revision 2 and the panel's part of that revision; takes a
// screenshot, reads the pane (parsed) and the panel's parts by revision and
// rows, and stops the query. Prints {pane, revisions: [{revision, polls,
// calls, cacheHits}], rows: [{route, part, revision}], deferParts,
// operation, consoleErrors, pageErrors, cspViolations}.
import { main, withPage } from './browser.mjs';

const [url, query, screenshot] = process.argv.slice(2);

main(() => withPage(async (page) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(url);
  await page.waitForSelector('.graphiql-sidebar [aria-label$="Documentation Explorer"]', { timeout: 60_000 });
  await page.evaluate((q) => {
    document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue(q);
  }, query);
  await page.click('.graphiql-execute-button');
  const paneAt = async (revision) => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      let pane = null;
      try {
        pane = JSON.parse(await page.evaluate(() => document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror.getValue() || ''));
      } catch { pane = null; }
      if (pane && pane.revision >= revision) return pane;
      await page.waitForTimeout(100);
    }
    throw new Error(`the result pane never showed revision ${revision}`);
  };
  await paneAt(1);
  process.stderr.write('revision 1 shown\n');
  const pane = await paneAt(2);
  await page.waitForSelector('[data-testid="upstream-calls"] [data-upstream-revision="2"]', { timeout: 60_000 });
  await page.screenshot({ path: screenshot });
  const shown = await page.evaluate(() => ({
    operation: document.querySelector('.upstream-operation')?.textContent || '',
    revisions: [...document.querySelectorAll('[data-upstream-revision]')].map((e) => ({
      revision: Number(e.dataset.upstreamRevision), polls: Number(e.dataset.polls), calls: Number(e.dataset.calls), cacheHits: Number(e.dataset.cacheHits),
    })),
    rows: [...document.querySelectorAll('[data-upstream-call]')].map((e) => ({
      route: e.dataset.upstreamCall, part: e.dataset.part, revision: Number(e.dataset.revision || 0), cached: e.dataset.cached === 'true',
    })),
    deferParts: [...document.querySelectorAll('[data-upstream-part]')].map((e) => e.dataset.upstreamPart),
  }));
  await page.click('.graphiql-execute-button'); // stop
  return { pane, ...shown };
}));
