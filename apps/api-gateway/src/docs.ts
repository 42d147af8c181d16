import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

let bundle: Promise<Buffer> | undefined;

/** The API reference bundle is served by the gateway itself, so `/docs` works without internet access. */
export function referenceBundle(): Promise<Buffer> {
  if (!bundle) {
    const entry = createRequire(import.meta.url).resolve("@scalar/api-reference");
    bundle = readFile(join(dirname(entry), "browser", "standalone.js"));
  }
  return bundle;
}

/**
 * Scalar as an offline installation needs it: the features that call the vendor's cloud (the AI
 * agent, MCP generation, the developer toolbar with deploy and share) are off, requests are sent
 * from the page itself (no proxy), and Bearer authentication is the preselected scheme. A link
 * leads to the admin console, which links back here.
 */
export const DOCS_CONFIG = {
  withDefaultFonts: false,
  hideClientButton: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
  telemetry: false,
  authentication: { preferredSecurityScheme: "bearerAuth" },
} as const;

export function docsPage(specUrl: string, scriptUrl: string): string {
  const config = JSON.stringify({ url: specUrl, ...DOCS_CONFIG });
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Agentplane API reference</title>
    <style>
      .agentplane-console-link { position: fixed; right: 1rem; bottom: 1rem; z-index: 1000; padding: 0.4rem 0.8rem;
        border-radius: 0.4rem; background: #4f46e5; color: #fff; font: 14px system-ui, sans-serif; text-decoration: none; }
    </style>
  </head>
  <body>
    <a class="agentplane-console-link" href="/">Admin console</a>
    <div id="app"></div>
    <script src="${scriptUrl}"></script>
    <script>Scalar.createApiReference("#app", ${config});</script>
  </body>
</html>`;
}

/**
 * The reference page's content security policy: the console's policy (it shares the console's
 * origin, where one injected script could act with a person's session), but for the page's one
 * inline script, allowed by its hash. Scalar renders Markdown from the document and runs a
 * request client; a flaw there must not be able to run a script of its own.
 */
export function docsPolicy(html: string): string {
  const inline = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    (m) =>
      `'sha256-${createHash("sha256")
        .update(m[1] ?? "")
        .digest("base64")}'`,
  );
  return [
    "default-src 'self'",
    `script-src 'self' ${inline.join(" ")}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}
