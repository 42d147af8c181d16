import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "./harness.ts";

/** Sends raw bytes and reads the whole answer (the server closes the connection after it). */
function rawExchange(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      answer += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(answer));
  });
}

function parse(answer: string) {
  const [head = "", body = ""] = answer.split("\r\n\r\n");
  const [statusLine = "", ...headerLines] = head.split("\r\n");
  const headers = new Map(
    headerLines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
  );
  return {
    status: Number(statusLine.split(" ")[1]),
    headers,
    body: body ? (JSON.parse(body) as Record<string, unknown>) : {},
  };
}

/** What Node's HTTP parser refuses before the gateway sees a request is a problem too. */
describe("requests the HTTP parser refuses", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it("answers a path past the header size limit with a 431 problem", async () => {
    const answer = parse(
      await rawExchange(
        h.url,
        `GET /v1/orgs/${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n`,
      ),
    );
    expect(answer.status).toBe(431);
    expect(answer.headers.get("content-type")).toBe("application/problem+json");
    expect(answer.body).toMatchObject({ status: 431, type: expect.stringContaining("headers-too-large") });
  });

  it.each([
    ["no Host", "GET /v1/orgs HTTP/1.1\r\n\r\n"],
    ["a Host that is no host", "GET /v1/orgs HTTP/1.1\r\nHost: a b\r\n\r\n"],
    ["a port out of range", "GET /v1/orgs HTTP/1.1\r\nHost: x:99999\r\n\r\n"],
    ["an asterisk target", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"],
  ])("answers a request with %s, which no URL can be made of, with a 400 problem", async (_, bytes) => {
    const answer = parse(await rawExchange(h.url, bytes.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n")));
    expect(answer.status).toBe(400);
    expect(answer.headers.get("content-type")).toBe("application/problem+json");
    expect(answer.body).toMatchObject({ status: 400, type: expect.stringContaining("bad-request") });
  });

  it("answers a request line that is not HTTP with a 400 problem", async () => {
    const answer = parse(await rawExchange(h.url, "GET /v1/orgs\u0001 HTTP/1.1\r\nHost: x\r\n\r\n"));
    expect(answer.status).toBe(400);
    expect(answer.headers.get("content-type")).toBe("application/problem+json");
    expect(answer.body).toMatchObject({ status: 400, type: expect.stringContaining("bad-request") });
  });
});
