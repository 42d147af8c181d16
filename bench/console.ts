// The admin console in headless Chromium against the embedded platform: first contentful paint and
// time until the data is on screen (interactive) for the organization overview and the audit page
// with 1,000 records, the sign-in page (no API data) as the baseline, and the bundle sizes.
// Run: npm run bench -- console
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { launchChromium } from "@agentplane/testkit/browser";
import { fmt, freePort, REPO_ROOT, startNode, waitForHealth } from "./lib.ts";

const ROUNDS = 5;
const RECORDS = 1000;
const token = `bench_${randomBytes(24).toString("hex")}`;
const dataDir = mkdtempSync(join(tmpdir(), "agentplane-bench-console-"));
const port = await freePort();
const url = `http://localhost:${port}`;
const platform = startNode("apps/platform/src/main.ts", [], {
  PORT: String(port),
  HOST: "127.0.0.1",
  AGENTPLANE_DATA_DIR: dataDir,
  AGENTPLANE_BOOTSTRAP_TOKEN: token,
  AGENT_RUNTIME: "off",
  PUBLIC_URL: url,
  LOG_LEVEL: "warn",
});

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

const browser = await launchChromium();
try {
  await waitForHealth(url, 180_000);
  const orgId = (await api("POST", "/v1/orgs", { name: "Bench" })).id as string;
  for (let i = 0; i < RECORDS; i += 10) {
    await Promise.all(
      Array.from({ length: 10 }, (_, j) => api("PATCH", `/v1/orgs/${orgId}`, { name: `Bench ${i + j}` })),
    );
  }
  // Records arrive through the event bus: wait until the trail holds them all.
  for (let waited = 0; waited < 60_000; waited += 500) {
    const page = await api("GET", `/v1/orgs/${orgId}/audit-trail?limit=500`);
    if ((page.items as unknown[]).length >= 500 && page.nextCursor) break;
    await new Promise((r) => setTimeout(r, 500));
  }

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  // Sign in once through the page (the session cookie then serves every measured load).
  await page.goto(`${url}/sign-in`);
  await page.getByLabel("API token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/orgs\//);

  /** A cold navigation (new page, cache kept like a returning person's): FCP and data on screen. */
  async function measure(path: string, ready: (p: typeof page) => Promise<unknown>) {
    const fcp: number[] = [];
    const tti: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const p = await context.newPage();
      const started = Date.now();
      await p.goto(`${url}${path}`);
      await ready(p);
      tti.push(Date.now() - started);
      fcp.push(
        await p.evaluate(() => performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? Number.NaN),
      );
      await p.close();
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    return { fcp: median(fcp), tti: median(tti) };
  }

  const signIn = await measure("/sign-in", (p) => p.getByRole("button", { name: "Sign in" }).waitFor());
  const overview = await measure(`/orgs/${orgId}`, (p) => p.getByText("Nothing: as owner").waitFor());
  const audit = await measure(`/orgs/${orgId}/audit`, (p) =>
    p.getByRole("button", { name: "Next page", disabled: false }).waitFor(),
  );
  console.log(`median of ${ROUNDS} loads each, headless Chromium, 1280x800, embedded platform`);
  console.log("page                          first paint   data on screen (interactive)");
  const row = (name: string, m: { fcp: number; tti: number }) =>
    console.log(`${name.padEnd(30)}${`${fmt(m.fcp, 0)} ms`.padEnd(14)}${fmt(m.tti, 0)} ms`);
  row("sign-in (baseline, no data)", signIn);
  row("organization overview", overview);
  row(`audit trail (${RECORDS} records)`, audit);

  const assets = join(REPO_ROOT, "apps/console/dist/assets");
  const html = readFileSync(join(REPO_ROOT, "apps/console/dist/index.html"), "utf8");
  console.log("\nbundle (apps/console/dist/assets)      raw        gzip");
  let mainGzip = 0;
  for (const file of readdirSync(assets).sort()) {
    const bytes = readFileSync(join(assets, file));
    const gz = gzipSync(bytes).length;
    const main = html.includes(file);
    if (main) mainGzip += gz;
    console.log(
      `${`${file}${main ? " (main)" : ""}`.padEnd(38)}${`${fmt(bytes.length / 1024, 1)} KB`.padEnd(11)}${fmt(gz / 1024, 1)} KB`,
    );
  }
  console.log(`main bundle (loaded by index.html): ${fmt(mainGzip / 1024, 1)} KB gzipped (budget 300 KB)`);
} finally {
  await browser.close();
  platform.kill("SIGTERM");
  await new Promise((r) => platform.once("exit", r));
  rmSync(dataDir, { recursive: true, force: true });
}
