import { createServiceApp, inProcessFetch, type Logger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "./harness.ts";

const MiB = 1024 * 1024;

const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

/** A logger recording each line as pino would write it (level number, fields, msg). */
function capturingLogger(lines: Record<string, unknown>[]): Logger {
  const make = (bindings: Record<string, unknown>): Logger => {
    const logger: Record<string, unknown> = {
      level: "debug",
      child: (more: Record<string, unknown>) => make({ ...bindings, ...more }),
      isLevelEnabled: () => true,
    };
    for (const [name, level] of Object.entries(LEVELS)) {
      logger[name] = (obj: unknown, msg?: string) =>
        lines.push(
          typeof obj === "string" ? { ...bindings, level, msg: obj } : { ...bindings, ...(obj as object), level, msg },
        );
    }
    return logger as unknown as Logger;
  };
  return make({});
}

function chunked(size: number, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const n = Math.min(chunk, size - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(0x61));
    },
  });
}

describe("an oversized authenticated body", () => {
  let h: Harness;
  const gatewayLines: Record<string, unknown>[] = [];
  const serviceLines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    // A real service app (service-kit's error handler and body limit) that reads the body, in process.
    let service: ReturnType<typeof createServiceApp> | undefined;
    h = await startHarness({
      logger: capturingLogger(gatewayLines),
      extraTargets: {
        audit: { fetch: (request) => inProcessFetch(service!)(request), ready: async () => true },
      },
    });
    service = createServiceApp({ name: "audit", keys: h.keys, logger: capturingLogger(serviceLines) });
    service.post("/v1/orgs/:orgId/spending-limits", async (c) => c.json({ bytes: (await c.req.text()).length }, 201));
  });
  afterAll(() => h.close());

  it("is a 413 logged once at info with the route, never as an error", async () => {
    const res = await fetch(`${h.url}/v1/orgs/org_x/spending-limits`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.ownerToken}`, "content-type": "application/json" },
      body: chunked(10 * MiB),
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { type: string }).type).toMatch(/payload-too-large$/);
    // Give any late log line of the aborted stream a moment to appear.
    await new Promise((r) => setTimeout(r, 100));
    const lines = [...gatewayLines, ...serviceLines];
    expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    const info = lines.filter((l) => l.level === 30 && /too large|over the limit/i.test(String(l.msg)));
    expect(info).toHaveLength(1);
    expect(info[0]).toMatchObject({ route: "createSpendingLimit", status: 413 });
  });
});
