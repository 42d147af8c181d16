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

export function docsPage(specUrl: string, scriptUrl: string): string {
  const config = JSON.stringify({ url: specUrl, withDefaultFonts: false, hideClientButton: false });
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Agentplane API reference</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="${scriptUrl}"></script>
    <script>Scalar.createApiReference("#app", ${config});</script>
  </body>
</html>`;
}
