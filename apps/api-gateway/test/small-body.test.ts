import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSmallBody } from "../src/forward.ts";

describe("a small declared body read whole from the connection", () => {
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    // As the gateway reads it: a few steps after the headers, when the body that came with them
    // is in the buffer and the parser may not have reached the message's end yet.
    void (async () => {
      await Promise.resolve();
      const headers = { get: (name: string) => (req.headers[name] as string | undefined) ?? null };
      const body = await readSmallBody("POST", headers, req);
      res.end(`${body?.byteLength}:${Buffer.from(body ?? []).toString()}`);
    })();
  });
  const agent = new Agent({ connections: 1 });
  let url = "";

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await agent.close();
    server.close();
  });

  it("is the body, and the request still ends as one read through its events would", async () => {
    for (const text of ["hello", '{"model":"m","max_tokens":5}', "x".repeat(40_000)]) {
      const answer = await request(`${url}/`, { method: "POST", body: text, dispatcher: agent });
      expect(await answer.body.text()).toBe(`${Buffer.byteLength(text)}:${text}`);
      const req = requests.at(-1) as IncomingMessage;
      // Nobody else reads the request: it ends only if the read left it flowing to its end.
      await expect.poll(() => req.readableEnded, { timeout: 1000 }).toBe(true);
    }
  });
});
