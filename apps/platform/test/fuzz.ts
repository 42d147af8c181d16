import { ALL_ROUTES, type ServiceName } from "@agentplane/contracts";
import { expect } from "vitest";
import type { WalkedCall } from "./audit-walk.ts";

/** A small seeded generator (mulberry32): the same seed walks the same requests. */
export function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  return { next, int, pick };
}

/**
 * Raw path or query text: malformed escapes, NUL, encoded lone surrogates, overlong, odd bytes.
 * (A bare `..` segment is resolved by the client before sending, so it names another path.)
 */
const RAW_SEGMENTS = [
  "%E0%A4%A",
  "%00",
  "a%00b",
  "%ED%A0%80",
  "%FF%FE",
  "%",
  "%zz",
  "%2F..%2F",
  "x".repeat(300),
  "%F0%9F%98%80",
  "prj_0000000000000000000000000",
  "org_%00",
  "%C3%28",
  "' or 1=1 --",
  "%3Cscript%3E",
];

/** JSON strings that no store accepts next to ordinary ones. */
const STRINGS = ["", "ok", "a\u0000b", "bad \udc00", "\ud800", "😀", "x".repeat(5000), "%00", "\u202e", "null"];

function fuzzValue(rng: ReturnType<typeof seeded>, depth: number): unknown {
  switch (rng.int(depth > 2 ? 4 : 6)) {
    case 0:
      return rng.pick(STRINGS);
    case 1:
      return rng.pick([0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER, true, false, null]);
    case 2:
      return rng.pick(STRINGS);
    case 3:
      return rng.pick(["owner", "admin", "viewer", "2026-01-01T00:00:00Z", "prj_x"]);
    case 4:
      return Array.from({ length: rng.int(3) }, () => fuzzValue(rng, depth + 1));
    default: {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < 1 + rng.int(4); i++) {
        out[rng.pick(["name", "role", "slug", "image", "labels", "command", "env", "\u0000k", "\udc00", "projectId"])] =
          fuzzValue(rng, depth + 1);
      }
      return out;
    }
  }
}

/**
 * `count` requests from a seeded generator against routes of the deployed services: path
 * parameters and query values from hostile raw text, bodies of hostile JSON. Every answer must be
 * below 500; the calls are returned for the audit check.
 */
export async function fuzzRoutes(
  baseUrl: string,
  token: string,
  deployed: ReadonlySet<ServiceName>,
  options: { seed: number; count: number },
): Promise<WalkedCall[]> {
  const rng = seeded(options.seed);
  const routes = ALL_ROUTES.filter(
    (r) => !r["x-websocket"] && deployed.has(r["x-service"]) && r.method.toUpperCase() !== "DELETE",
  );
  const calls: WalkedCall[] = [];
  const failures: string[] = [];
  for (let i = 0; i < options.count; i++) {
    const route = rng.pick(routes);
    const method = route.method.toUpperCase();
    const path = route.path.replaceAll(/\{[^}]+\}/g, () => rng.pick(RAW_SEGMENTS));
    const query = rng.int(3) === 0 ? `?${rng.pick(["limit", "cursor", "q", "%00"])}=${rng.pick(RAW_SEGMENTS)}` : "";
    const hasBody = method !== "GET";
    const body = hasBody ? (rng.int(5) === 0 ? '{"name":"a\\u0000' : JSON.stringify(fuzzValue(rng, 0))) : undefined;
    const res = await fetch(`${baseUrl}${path}${query}`, {
      method,
      headers: {
        authorization: `Bearer ${rng.int(10) === 0 ? "apl_fuzz_fuzz" : token}`,
        ...(hasBody ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body } : {}),
    });
    await res.arrayBuffer();
    if (res.status === 500) failures.push(`${method} ${path}${query} ${body?.slice(0, 80) ?? ""}`);
    calls.push({
      label: `fuzz ${options.seed}/${i}`,
      operationId: route.operationId,
      credentials: true,
      method,
      path: `${path}${query}`,
      status: res.status,
      requestId: res.headers.get("x-request-id") ?? "",
    });
  }
  expect(failures).toEqual([]);
  return calls;
}
