/**
 * Real headless Chromium (Debian's `chromium`, installed by `.ci/run`) driven by `playwright-core`,
 * one fresh profile per launch, and the folder the browser tests save screenshots to
 * (`ROLLGATE_SCREENSHOT_DIR`, default `/tmp/rollgate-screenshots`; `.ci/run` lists it).
 *
 * @module
 */
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM = Deno.env.get("ROLLGATE_CHROMIUM") ?? "/usr/bin/chromium";
/** Why the browser tests cannot run here; undefined when they can. */
export const CHROMIUM_MISSING = await Deno.stat(CHROMIUM).then(
  () => undefined,
  () => `no Chromium at ${CHROMIUM} (apt-get install chromium)`,
);

export const SCREENSHOT_DIR = Deno.env.get("ROLLGATE_SCREENSHOT_DIR") ??
  "/tmp/rollgate-screenshots";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Uncaught errors of the pages' scripts. */
  errors: string[];
  /** Saves a screenshot as `<name>.png` in {@link SCREENSHOT_DIR}; returns its path. */
  screenshot(name: string, options?: { fullPage?: boolean; page?: Page }): Promise<string>;
  close(): Promise<void>;
}

/** Chromium with a fresh `--user-data-dir`, removed on close; every wait ends (30 s). */
export async function launchChromium(): Promise<Browser> {
  const profile = await Deno.makeTempDir({ prefix: "rollgate-chromium-" });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1400, height: 900 },
    timeout: 30_000,
  });
  context.setDefaultTimeout(30_000);
  const page = context.pages()[0] ?? await context.newPage();
  const errors: string[] = [];
  context.on("weberror", (e) => errors.push(e.error().message));
  await Deno.mkdir(SCREENSHOT_DIR, { recursive: true });
  return {
    context,
    page,
    errors,
    async screenshot(name, options = {}) {
      const path = `${SCREENSHOT_DIR}/${name}.png`;
      await (options.page ?? page).screenshot({ path, fullPage: options.fullPage ?? false });
      return path;
    },
    async close() {
      await context.close();
      await Deno.remove(profile, { recursive: true });
    },
  };
}
