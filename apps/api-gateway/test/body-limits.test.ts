// Model requests carry whole conversations: the gateway lets inference bodies up to 20 MiB through
// (the proxy applies its own configured cap), while every other service keeps the 1 MiB limit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "./harness.ts";

const MiB = 1024 * 1024;

describe("request body limits per service", () => {
  let h: Harness;
  const received: number[] = [];

  beforeAll(async () => {
    h = await startHarness({
      extraTargets: {
        // A stand-in inference proxy that counts what reached it.
        inference: {
          fetch: async (request) => {
            const bytes = (await request.arrayBuffer()).byteLength;
            received.push(bytes);
            return Response.json({ bytes });
          },
          ready: async () => true,
        },
      },
    });
  });
  afterAll(() => h.close());

  const post = (path: string, body: RequestInit["body"], headers: Record<string, string> = {}) =>
    fetch(`${h.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.ownerToken}`, "content-type": "application/json", ...headers },
      body,
      duplex: "half",
    } as RequestInit);

  it("passes a 3 MiB model request to the inference proxy, declared or chunked", async () => {
    const declared = await post("/v1/llm/cloud-a/us-east-1/model/m/invoke", "x".repeat(3 * MiB));
    expect(declared.status).toBe(200);
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 3; i++) controller.enqueue(new Uint8Array(MiB).fill(0x61));
        controller.close();
      },
    });
    expect((await post("/v1/llm/cloud-a/us-east-1/model/m/invoke", chunked)).status).toBe(200);
    expect(received).toEqual([3 * MiB, 3 * MiB]);
  });

  it("refuses a model request over 20 MiB, and keeps 1 MiB for other services", async () => {
    const huge = await post("/v1/llm/cloud-a/us-east-1/model/m/invoke", "x".repeat(21 * MiB));
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as { detail: string }).detail).toMatch(/20 MiB/);
    expect(received).not.toContain(21 * MiB);
    const big = await post("/v1/orgs", "x".repeat(2 * MiB));
    expect(big.status).toBe(413);
    expect(((await big.json()) as { detail: string }).detail).toMatch(/1 MiB/);
  });
});
