import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";

let fake: FakeModel;
let rt: TestRuntime;
beforeAll(async () => {
  fake = await startFakeModel();
  rt = await startTestRuntime(fake);
  await rt.json("PUT", "/agents/webhooks/enabled", { enabled: true });
  await rt.json("POST", "/agents/webhook-subscriptions", { name: "raw" });
});
afterAll(async () => {
  await rt.close();
  await fake.close();
});

/** Sends bytes as they are and reads the answer until the server closes or 3 s pass. */
function raw(bytes: string): Promise<{ status: number; head: string; body: string }> {
  const { port } = new URL(rt.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    let text = "";
    const done = () => {
      socket.destroy();
      const [head = "", body = ""] = text.split("\r\n\r\n", 2);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head: head.toLowerCase(), body });
    };
    const timer = setTimeout(done, 3000);
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      text += chunk;
    });
    socket.on("end", () => {
      clearTimeout(timer);
      done();
    });
    socket.on("error", reject);
    socket.write(bytes);
  });
}

const host = () => `Host: ${new URL(rt.url).host}\r\n`;

describe("requests the HTTP parser or the request builder refuses", () => {
  it.each([
    ["headers over the size limit", () => `GET /health HTTP/1.1\r\n${host()}X-Big: ${"a".repeat(20_000)}\r\n\r\n`, 431],
    ["a request line that is not HTTP", () => "GARBAGE\r\n\r\n", 400],
    ["an HTTP/1.1 request without Host", () => "GET /health HTTP/1.1\r\n\r\n", 400],
    ["a Host that is no host", () => "GET /health HTTP/1.1\r\nHost: [zz\r\nConnection: close\r\n\r\n", 400],
    [
      "a chunked webhook body with a chunk size that is not hex",
      () =>
        `POST /agents/webhooks/raw HTTP/1.1\r\n${host()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      400,
    ],
    [
      "both Content-Length and Transfer-Encoding",
      () =>
        `POST /agents/webhooks/raw HTTP/1.1\r\n${host()}Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}`,
      400,
    ],
  ])("%s is answered with a problem", async (_name, request, status) => {
    const answer = await raw(request());
    expect(answer.status).toBe(status);
    expect(answer.head).toContain("content-type: application/problem+json");
    const problem = JSON.parse(answer.body) as { status: number; type: string };
    expect(problem.status).toBe(status);
  });

  it("still serves the next request after refusing one", async () => {
    expect((await rt.request("GET", "/health")).status).toBe(200);
  });
});

describe("idle connections", () => {
  it("are held 65 s, longer than a load balancer in front holds its own", async () => {
    const res = await fetch(`${rt.url}/health`);
    await res.arrayBuffer();
    expect(res.headers.get("keep-alive")).toBe("timeout=65");
  });
});
