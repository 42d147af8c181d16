import { readFile } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import { PAGE_CSP, PAGE_SECURITY_HEADERS } from "@agentplane/contracts/runtime";
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
 * The web UI's files at `/` and `/assets/*`, read from `web/dist`. Everything else stays the
 * API's: the UI routes with the URL hash, so no API path is shadowed by a page.
 */
export function serveWebUi(app: OpenAPIHono, dist = WEB_DIST): void {
  app.get("/", async (c) => {
    const html = await readFile(join(dist, "index.html"), "utf8").catch(() => NOT_BUILT);
    return c.html(html, 200, {
      "cache-control": "no-cache",
      "content-security-policy": PAGE_CSP,
      ...PAGE_SECURITY_HEADERS,
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
      ...PAGE_SECURITY_HEADERS,
    });
  });
}
