import { readFile, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import { PAGE_CSP, PAGE_SECURITY_HEADERS } from "@agentplane/contracts";
import type { HeaderReader } from "./forward.ts";

/**
 * The admin console: a single-page app built to static files (apps/console/dist). Its assets have
 * content hashes in their names and are cached for a year; `index.html` is revalidated on every
 * load so a new build is picked up at once. Every page is answered with a content security policy
 * that lets it load and connect only to this installation's own origin.
 */
export interface ConsoleAssets {
  serve(method: string, path: string, headers: HeaderReader): Promise<Response | undefined>;
}

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
};

/** Paths that belong to the API, the reference or the protocols beside it: never a console page. */
const NOT_PAGES = /^\/(v1|docs|health|k8s|mcp|agent|activate|\.well-known)(\/|$)/;
const ASSET_NAME = /^\/assets\/[\w.-]+$/;
const ROOT_FILE = /^\/[\w-]+\.(svg|png|ico|txt)$/;

export function consoleAssets(dir: string): ConsoleAssets {
  // Kept while the file is unchanged: a new build replaces it (and deletes the assets the old one
  // named), so a stale copy would load a blank page.
  let index: { version: string; html: Promise<Buffer | undefined> } | undefined;
  const readIndex = async () => {
    const path = join(dir, "index.html");
    const info = await stat(path).catch(() => undefined);
    const version = info ? `${info.mtimeMs}:${info.size}:${info.ino}` : "";
    if (index?.version !== version) {
      index = { version, html: info ? readFile(path).catch(() => undefined) : Promise.resolve(undefined) };
    }
    return index.html;
  };

  async function file(path: string, cacheControl: string): Promise<Response | undefined> {
    const full = join(dir, path);
    const info = await stat(full).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    return new Response(new Uint8Array(await readFile(full)), {
      headers: {
        "content-type": TYPES[extname(path)] ?? "application/octet-stream",
        "cache-control": cacheControl,
        ...PAGE_SECURITY_HEADERS,
      },
    });
  }

  return {
    async serve(method, path, headers) {
      if (method !== "GET" && method !== "HEAD") return undefined;
      if (ASSET_NAME.test(path)) {
        return (
          (await file(path, "public, max-age=31536000, immutable")) ??
          new Response("Not found", { status: 404, headers: { "cache-control": "no-store", ...PAGE_SECURITY_HEADERS } })
        );
      }
      if (ROOT_FILE.test(path)) {
        const found = await file(path, "public, max-age=3600");
        if (found) return found;
      }
      // A page of the app (its router reads the path); API clients asking for JSON keep their 404.
      if (NOT_PAGES.test(path)) return undefined;
      const accept = headers.get("accept") ?? "";
      if (path !== "/" && !accept.includes("text/html")) return undefined;
      const html = await readIndex();
      const body =
        html ??
        Buffer.from(
          "<!doctype html><title>Agentplane</title><p>The console is not built: run <code>npm start</code> again or <code>npm run build</code>.</p>",
        );
      return new Response(new Uint8Array(body), {
        status: html ? 200 : 503,
        headers: {
          "content-type": TYPES[".html"]!,
          "cache-control": "no-cache",
          "content-security-policy": PAGE_CSP,
          ...PAGE_SECURITY_HEADERS,
        },
      });
    },
  };
}
