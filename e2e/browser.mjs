// Shared by the browser scripts: Debian's chromium driven by playwright-core,
// with a fresh profile; no browser is downloaded.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

// withPage opens a page in a fresh headless chromium, runs fn(page, seen) and
// closes the browser. seen collects the page's console errors, uncaught
// exceptions and Content-Security-Policy violations.
export async function withPage(fn) {
  const profile = mkdtempSync(join(tmpdir(), 'e2e-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage'],
  });
  const seen = { consoleErrors: [], pageErrors: [], cspViolations: [] };
  try {
    const page = context.pages()[0] || await context.newPage();
    await page.addInitScript(() => {
      window.__cspViolations = [];
      document.addEventListener('securitypolicyviolation', (e) => {
        window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI);
      });
    });
    page.on('console', (m) => {
      if (m.type() === 'error') seen.consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => seen.pageErrors.push(String(e && e.message)));
    const out = await fn(page, seen);
    seen.cspViolations.push(...await page.evaluate(() => window.__cspViolations || []));
    return { ...out, ...seen };
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

// main runs fn and prints its JSON result on stdout; a failure prints
// {"error": ...} and exits 1.
export function main(fn) {
  fn().then(
    (out) => { process.stdout.write(JSON.stringify(out) + '\n'); },
    (e) => { process.stdout.write(JSON.stringify({ error: String((e && e.stack) || e) }) + '\n'); process.exit(1); },
  );
}
