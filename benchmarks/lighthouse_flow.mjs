// Lighthouse's Node API driven through puppeteer-core on a Chromium that benchmarks/lighthouse.py started and
// signed in: the browser's own session cookie then reaches every request, the service worker's included (a
// Cookie header given with --extra-headers does not reach those, and Lighthouse scored the sign-in page).
//
// Input (argv[2], JSON): {prefix, devtools, base, email, password, forms: ["phone", "desktop"], categories,
//   pages: [{name, path, marker, open?}]}. A page with `open` is a state reached by a click, not a URL: the
//   script loads `path`, clicks the first visible `open` element, waits for `marker` and takes a Lighthouse
//   snapshot of it (the composer panel has no address of its own).
// Output: one JSON object per line and page and form factor: the scores, what the browser showed (its final
//   URL, whether the marker and the sign-in form were on the page) for the caller to check, and the audits
//   that cost points with a few of the elements each names.
import {createRequire} from "node:module";
import {join} from "node:path";
import {pathToFileURL} from "node:url";

const spec = JSON.parse(process.argv[2]);
const lighthouseDir = join(spec.prefix, "node_modules", "lighthouse");
const {default: lighthouse, snapshot, desktopConfig} = await import(
  pathToFileURL(join(lighthouseDir, "core", "index.js")).href);
const puppeteer = createRequire(join(lighthouseDir, "package.json"))("puppeteer-core");

// Lighthouse's own emulation for navigations; a snapshot keeps the page as it is, so the page gets the same
// screen first (core/config/constants.js: the moto g power phone and the desktop preset's 1350 x 940).
const SCREENS = {
  phone: {width: 412, height: 823, deviceScaleFactor: 1.75, isMobile: true, hasTouch: true},
  desktop: {width: 1350, height: 940, deviceScaleFactor: 1, isMobile: false, hasTouch: false},
};

function configFor(form) {
  const base = form === "desktop" ? desktopConfig : {extends: "lighthouse:default"};
  return {...base, settings: {...(base.settings || {}), onlyCategories: spec.categories,
                              disableFullPageScreenshot: true}};
}

async function seen(page, marker) {
  return page.evaluate((selector) => ({
    url: location.href,
    marker: !!document.querySelector(selector),
    signIn: !!document.querySelector('form[action="/login"] input[type="password"]'),
    signedIn: document.body.hasAttribute("data-signed-in"),
    title: document.title,
  }), marker);
}

function failing(lhr) {
  const out = [];
  for (const category of Object.values(lhr.categories)) {
    for (const ref of category.auditRefs) {
      const audit = lhr.audits[ref.id];
      if (!audit || ref.weight === 0 || audit.score === null || audit.score >= 1) continue;
      const items = ((audit.details && audit.details.items) || []).slice(0, 4).map((item) =>
        (item.node && (item.node.selector || item.node.snippet)) || item.source?.url || item.description ||
        item.url || JSON.stringify(item).slice(0, 160));
      out.push({category: category.id, id: ref.id, title: audit.title, score: audit.score, weight: ref.weight,
                items});
    }
  }
  return out;
}

const browser = await puppeteer.connect({browserURL: spec.devtools, defaultViewport: null});
try {
  const page = await browser.newPage();
  // Sign in as a person does, through the form; the browser keeps the cookie for everything after.
  await page.goto(spec.base + "/login", {waitUntil: "load"});
  await page.type('input[name="email"]', spec.email);
  await page.type('input[name="password"]', spec.password);
  await Promise.all([page.waitForNavigation({waitUntil: "load"}), page.click('form[action="/login"] [type="submit"]')]);
  const after = await seen(page, "body[data-signed-in]");
  if (!after.signedIn) throw new Error(`sign-in failed: ${after.url} (${after.title})`);

  for (const form of spec.forms) {
    const config = configFor(form);
    for (const target of spec.pages) {
      const url = spec.base + target.path;
      let lhr, shown;
      if (target.open) {
        await page.setViewport(SCREENS[form]);
        await page.goto(url, {waitUntil: "load"});
        const handles = await page.$$(target.open);
        let clicked = false;
        for (const handle of handles) {
          if (await handle.isVisible()) { await handle.click(); clicked = true; break; }
        }
        if (!clicked) throw new Error(`${target.name}: nothing visible matches ${target.open} on ${url}`);
        await page.waitForSelector(target.marker, {visible: true, timeout: 15000});
        lhr = (await snapshot(page, {config, flags: {logLevel: "error"}})).lhr;
        shown = await seen(page, target.marker);
        await page.setViewport(null);
      } else {
        lhr = (await lighthouse(url, {logLevel: "error"}, config, page)).lhr;
        shown = await seen(page, target.marker);
      }
      const scores = {};
      for (const [id, category] of Object.entries(lhr.categories)) {
        // a snapshot times nothing: its performance category holds only unweighted audits and scores 0
        const weight = category.auditRefs.reduce((sum, ref) => sum + ref.weight, 0);
        scores[id] = category.score === null || weight === 0 ? null : Math.round(category.score * 100);
      }
      process.stdout.write(JSON.stringify({
        name: target.name, form, mode: lhr.gatherMode, requested: url, finalUrl: lhr.finalDisplayedUrl,
        shown, scores, failing: failing(lhr), runtimeError: lhr.runtimeError?.message || null,
        warnings: lhr.runWarnings,
      }) + "\n");
    }
  }
} finally {
  await browser.disconnect();
}
