import { readFile } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { WEB_DIST } from "./build.ts";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".woff2": "font/woff2",
};

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Agent</title></head>
<body><main><h1>The web UI is not built</h1><p>Start the runtime from a checkout (<code>npm run runtime</code>)
to build it, or run <code>node scripts/bootstrap.mjs node apps/agent-runtime/scripts/build-web.ts</code>.
The API works without it: <a href="./openapi.json">openapi.json</a>.</p></main></body></html>`;

/**
 * What every page of the UI is answered with. The runtime's API takes no credential on a loopback
 * address, so its page must not run inside another site's (clickjacking): no framing, its own
 * scripts and connections only (inline styles: React sets them). The gateway sends the same policy
 * when it fronts this page (CONSOLE_CSP in apps/api-gateway/src/console-assets.ts).
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = { "x-content-type-options": "nosniff", "referrer-policy": "same-origin" };

/**
 * The web UI's files at `/` and `/assets/*`, read from `web/dist`. Everything else stays the
 * API's: the UI routes with the URL hash, so no API path is shadowed by a page.
 */
export function serveWebUi(app: OpenAPIHono, dist = WEB_DIST): void {
  app.get("/", async (c) => {
    const html = await readFile(join(dist, "index.html"), "utf8").catch(() => NOT_BUILT);
    return c.html(html, 200, {
      "cache-control": "no-cache",
      "content-security-policy": PAGE_CSP,
      ...SECURITY_HEADERS,
    });
  });
  app.get("/assets/*", async (c) => {
    const relativePath = normalize(c.req.path.slice(1));
    const file = join(dist, relativePath);
    if (!file.startsWith(join(dist, "assets") + sep)) return c.notFound();
    const body = await readFile(file).catch(() => undefined);
    if (!body) return c.notFound();
    // Vite puts a content hash in every asset name: a new build has new names.
    return c.body(body, 200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "cache-control": "public, max-age=31536000, immutable",
      ...SECURITY_HEADERS,
    });
  });
}
